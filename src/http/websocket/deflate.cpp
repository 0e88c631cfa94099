// permessage-deflate with zlib's raw deflate (RFC 7692 §7.2): a message is a run of deflate
// blocks ended by a sync flush whose empty stored block's 00 00 FF FF is left off the wire.
#include "http/websocket/deflate.hpp"

#include <zlib.h>

#include <algorithm>
#include <cstring>

namespace rivet::http::ws {

namespace {

constexpr char kTail[4] = {0x00, 0x00, char(0xFF), char(0xFF)};
// Inflated a piece at a time, so a bomb is stopped within this much of its bound.
constexpr size_t kInflateChunk = 16 * 1024;

}  // namespace

struct Deflater::State {
    z_stream z{};
    bool ok = false;
};

Deflater::Deflater(int level, uint8_t window_bits, bool no_context_takeover)
    : state_(std::make_unique<State>()), no_context_takeover_(no_context_takeover) {
    // zlib's raw deflate refuses a window of 8 (it would use 9); negotiation never agrees to 8.
    const int bits = std::clamp<int>(window_bits, 9, 15);
    state_->ok = deflateInit2(&state_->z, std::clamp(level, 1, 9), Z_DEFLATED, -bits, 8,
                              Z_DEFAULT_STRATEGY) == Z_OK;
}

Deflater::~Deflater() {
    if (state_->ok) deflateEnd(&state_->z);
}

void Deflater::reset() {
    if (state_->ok) deflateReset(&state_->z);
}

bool Deflater::compress(std::string_view message, std::string& out) {
    if (!state_->ok) return false;
    z_stream& z = state_->z;
    const size_t start = out.size();
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(message.data()));
    z.avail_in = uInt(message.size());
    // deflateBound covers the whole message; a sync flush adds a few bytes more.
    size_t room = deflateBound(&z, uLong(message.size())) + 16;
    for (;;) {
        const size_t old = out.size();
        out.resize(old + room);
        z.next_out = reinterpret_cast<Bytef*>(out.data() + old);
        z.avail_out = uInt(room);
        const int rc = deflate(&z, Z_SYNC_FLUSH);
        out.resize(old + room - z.avail_out);
        if (rc != Z_OK && rc != Z_BUF_ERROR) {
            out.resize(start);
            return false;
        }
        if (z.avail_out != 0 && z.avail_in == 0) break;  // flushed: nothing left inside
        room = 4096;
    }
    // The sync flush ends with an empty stored block: 00 00 FF FF, left off (§7.2.1).
    if (out.size() - start >= 4 && std::memcmp(out.data() + out.size() - 4, kTail, 4) == 0)
        out.resize(out.size() - 4);
    // An empty message right after a flush makes zlib write nothing (a repeated flush is a no-op);
    // nothing would leave the peer's inflater inside the tail's stored block. 0x00 is an empty
    // stored block's first byte, which the tail completes (§7.2.3.6).
    if (out.size() == start) out.push_back('\0');
    if (no_context_takeover_) deflateReset(&z);
    return true;
}

struct Inflater::State {
    z_stream z{};
    bool ok = false;
    bool stream_ended = false;  // the sender ended the deflate stream (BFINAL) in this message
    bool fed = false;           // this message has given compressed bytes
};

Inflater::Inflater(uint8_t window_bits, bool no_context_takeover)
    : state_(std::make_unique<State>()), no_context_takeover_(no_context_takeover) {
    // A peer compressing with zlib and a window of 8 really uses 9 (zlib's deflate cannot do 8):
    // a window of 9 inflates both, where one of 8 would refuse the former's distances.
    const int bits = std::clamp<int>(window_bits, 9, 15);
    state_->ok = inflateInit2(&state_->z, -bits) == Z_OK;
}

Inflater::~Inflater() {
    if (state_->ok) inflateEnd(&state_->z);
}

namespace {

// Inflates `in` onto `out`, never letting `out` hold more than max_out + 1 bytes.
Inflater::Result inflate_onto(z_stream& z, bool& stream_ended, std::string_view in,
                              std::string& out, size_t max_out) {
    using Result = Inflater::Result;
    if (in.empty()) return Result::Ok;
    // After the stream's final block, only nothing may follow (the tail we add is dropped).
    if (stream_ended) return Result::Corrupt;
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    z.avail_in = uInt(in.size());
    for (;;) {
        if (out.size() > max_out) return Result::TooBig;
        // One byte past the bound is room enough to show that the bound is passed.
        const size_t chunk = std::min(kInflateChunk, max_out - out.size() + 1);
        const size_t old = out.size();
        out.resize(old + chunk);
        z.next_out = reinterpret_cast<Bytef*>(out.data() + old);
        z.avail_out = uInt(chunk);
        const int rc = inflate(&z, Z_SYNC_FLUSH);
        out.resize(old + chunk - z.avail_out);
        if (out.size() > max_out) return Result::TooBig;
        if (rc == Z_STREAM_END) {
            stream_ended = true;
            return z.avail_in == 0 ? Result::Ok : Result::Corrupt;  // bytes past the end
        }
        if (rc == Z_BUF_ERROR) return Result::Ok;  // no progress: all input used
        if (rc != Z_OK) return Result::Corrupt;
        if (z.avail_in == 0 && z.avail_out != 0) return Result::Ok;
    }
}

}  // namespace

Inflater::Result Inflater::decompress(std::string_view piece, bool last, std::string& out,
                                      size_t max_out) {
    if (!state_->ok) return Result::Corrupt;
    state_->fed = state_->fed || !piece.empty();
    Result r = inflate_onto(state_->z, state_->stream_ended, piece, out, max_out);
    if (r != Result::Ok || !last) return r;
    // A compressed message of no bytes at all (a sender that left off even §7.2.3.6's 0x00) is
    // empty: the tail alone would leave the inflater inside a stored block.
    if (state_->fed && !state_->stream_ended)
        r = inflate_onto(state_->z, state_->stream_ended, std::string_view(kTail, 4), out, max_out);
    if (r != Result::Ok) return r;
    // A stream the sender ended must start afresh; otherwise keep the window unless told not to.
    if (no_context_takeover_ || state_->stream_ended) {
        inflateReset(&state_->z);
        state_->stream_ended = false;
    }
    state_->fed = false;
    return Result::Ok;
}

}  // namespace rivet::http::ws
