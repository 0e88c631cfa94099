// permessage-deflate (RFC 7692) with zlib: the negotiation of the Sec-WebSocket-Extensions
// offer, and a compressor and a decompressor per connection direction.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace rivet::http::ws {

// What the server accepts and prefers.
struct DeflateConfig {
    bool enabled = true;
    // Ask for / allow these even when the client did not offer them (the server's memory per
    // connection: with no context takeover the compressor needs no window between messages).
    bool server_no_context_takeover = false;
    uint8_t server_max_window_bits = 15;  // 9..15: the window the server compresses with
    int level = 6;                        // zlib's compression level, 1..9
    size_t min_size = 0;                  // messages shorter than this are sent uncompressed
};

// The agreed parameters of one connection.
struct DeflateParams {
    bool server_no_context_takeover = false;
    bool client_no_context_takeover = false;
    uint8_t server_max_window_bits = 15;  // 9..15 (an offer of 8 is declined: zlib cannot)
    uint8_t client_max_window_bits = 15;  // 8..15
};

// Reads a client's Sec-WebSocket-Extensions values (several offers, in order of preference)
// and picks the first permessage-deflate offer the server can accept. True: `params` and
// `response` (the value for the 101's Sec-WebSocket-Extensions) are set. False with
// `malformed` set: the header could not be parsed at all (RFC 6455 §9.1's grammar): the
// handshake fails (400). False otherwise: no acceptable offer, no extension. An offer with an
// unknown, repeated or badly valued parameter, or server_max_window_bits=8, is declined (RFC 7692
// §5.1, §7) and the next one tried. Not looked at when `config.enabled` is false.
bool negotiate_deflate(std::string_view offers, const DeflateConfig& config, DeflateParams& params,
                       std::string& response, bool& malformed);

// Compresses one message at a time (the sender's side).
class Deflater {
public:
    Deflater(int level, uint8_t window_bits, bool no_context_takeover);
    ~Deflater();
    Deflater(const Deflater&) = delete;
    Deflater& operator=(const Deflater&) = delete;
    // Appends the compressed message (without the 00 00 FF FF tail, §7.2.1) to `out`.
    // False: zlib failed (out of memory).
    bool compress(std::string_view message, std::string& out);
    // Forget the context: the next message references nothing sent before (after a message the
    // peer received from another compressor, e.g. a published frame compressed once).
    void reset();

private:
    struct State;
    std::unique_ptr<State> state_;
    bool no_context_takeover_;
};

// Decompresses one message at a time (the receiver's side), with a bound on the result.
class Inflater {
public:
    Inflater(uint8_t window_bits, bool no_context_takeover);
    ~Inflater();
    Inflater(const Inflater&) = delete;
    Inflater& operator=(const Inflater&) = delete;
    enum class Result { Ok, TooBig, Corrupt };
    // Feeds part of a compressed message's payload; appends what it inflates to `out`. `last`:
    // the message's final piece (the 00 00 FF FF tail is added). TooBig: `out` would pass
    // `max_out` bytes (1009); Corrupt: not a valid deflate stream (1007).
    Result decompress(std::string_view piece, bool last, std::string& out, size_t max_out);

private:
    struct State;
    std::unique_ptr<State> state_;
    bool no_context_takeover_;
};

}  // namespace rivet::http::ws
