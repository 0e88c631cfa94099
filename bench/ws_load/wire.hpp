// The client's side of the WebSocket wire (RFC 6455 §5, RFC 7692) for bench/ws_load: masked
// frames out, unmasked server frames in, the handshake's key and accept value, and the inflater
// of permessage-deflate. Self-contained on purpose (OpenSSL for SHA-1, zlib for inflate): the
// load generator must not share code with the server it measures, so a bug in rivet's codec
// cannot hide itself by agreeing with its own client.
#pragma once

#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <zlib.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace wsload {

enum Opcode : uint8_t { kCont = 0, kText = 1, kBinary = 2, kClose = 8, kPing = 9, kPong = 10 };

struct FrameHead {
    bool fin = false;
    bool rsv1 = false;
    uint8_t opcode = 0;
    uint64_t length = 0;
    size_t head_length = 0;
};

enum class HeadResult { Incomplete, Complete, Invalid };

// A server frame's head at the start of p[0..n). Invalid: masked (a server never masks, §5.1),
// RSV2/RSV3 set, or a reserved opcode.
inline HeadResult parse_server_head(const uint8_t* p, size_t n, FrameHead& h) {
    if (n < 2) return HeadResult::Incomplete;
    h.fin = (p[0] & 0x80) != 0;
    h.rsv1 = (p[0] & 0x40) != 0;
    h.opcode = p[0] & 0x0F;
    if ((p[0] & 0x30) != 0 || (p[1] & 0x80) != 0) return HeadResult::Invalid;
    if ((h.opcode > kBinary && h.opcode < kClose) || h.opcode > kPong) return HeadResult::Invalid;
    uint64_t len = p[1] & 0x7F;
    size_t head = 2;
    if (len == 126) {
        if (n < 4) return HeadResult::Incomplete;
        len = (uint64_t(p[2]) << 8) | p[3];
        head = 4;
    } else if (len == 127) {
        if (n < 10) return HeadResult::Incomplete;
        len = 0;
        for (int i = 0; i < 8; ++i) len = (len << 8) | p[2 + i];
        head = 10;
    }
    h.length = len;
    h.head_length = head;
    return HeadResult::Complete;
}

// XORs p[0..n) with the key, starting `offset` bytes into the payload.
inline void mask_bytes(uint8_t* p, size_t n, const uint8_t key[4], size_t offset = 0) {
    for (size_t i = 0; i < n; ++i) p[i] ^= key[(offset + i) & 3];
}

// A whole client frame: head (with the mask key) and the masked payload.
inline std::string masked_frame(uint8_t opcode, std::string_view payload, const uint8_t key[4]) {
    std::string out;
    out.reserve(payload.size() + 14);
    out.push_back(char(0x80 | opcode));
    const uint64_t len = payload.size();
    if (len < 126) {
        out.push_back(char(0x80 | len));
    } else if (len <= 0xFFFF) {
        out.push_back(char(0x80 | 126));
        out.push_back(char(len >> 8));
        out.push_back(char(len & 0xFF));
    } else {
        out.push_back(char(0x80 | 127));
        for (int i = 7; i >= 0; --i) out.push_back(char((len >> (8 * i)) & 0xFF));
    }
    out.append(reinterpret_cast<const char*>(key), 4);
    const size_t start = out.size();
    out.append(payload);
    mask_bytes(reinterpret_cast<uint8_t*>(out.data() + start), payload.size(), key);
    return out;
}

inline std::string base64(const unsigned char* data, size_t n) {
    std::string out(4 * ((n + 2) / 3) + 1, '\0');
    const int len = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), data, int(n));
    out.resize(size_t(len));
    return out;
}

// Sec-WebSocket-Key: 16 random bytes, base64 (§4.1).
inline std::string random_key() {
    unsigned char raw[16];
    RAND_bytes(raw, sizeof raw);
    return base64(raw, sizeof raw);
}

// The Sec-WebSocket-Accept a server must answer to `key` (§4.2.2).
inline std::string expected_accept(std::string_view key) {
    std::string text(key);
    text += "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
    unsigned char digest[SHA_DIGEST_LENGTH];
    SHA1(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest);
    return base64(digest, sizeof digest);
}

// permessage-deflate's receiving side (RFC 7692 §7.2.2): raw deflate, the message's compressed
// payload followed by 00 00 FF FF. Reset after each message when the server does not keep its
// context (server_no_context_takeover).
class Inflater {
public:
    Inflater() {
        std::memset(&z_, 0, sizeof z_);
        ok_ = inflateInit2(&z_, -15) == Z_OK;
    }
    ~Inflater() {
        if (ok_) inflateEnd(&z_);
    }
    Inflater(const Inflater&) = delete;
    Inflater& operator=(const Inflater&) = delete;

    // Inflates `in` (a whole message) into `out`; false on a corrupt stream.
    bool inflate_message(std::string& in, std::string& out, bool reset) {
        if (!ok_) return false;
        in.append("\x00\x00\xff\xff", 4);
        out.clear();
        z_.next_in = reinterpret_cast<Bytef*>(in.data());
        z_.avail_in = uInt(in.size());
        char chunk[16384];
        int rc = Z_OK;
        while (z_.avail_in > 0 || rc == Z_OK) {
            z_.next_out = reinterpret_cast<Bytef*>(chunk);
            z_.avail_out = sizeof chunk;
            rc = inflate(&z_, Z_SYNC_FLUSH);
            if (rc != Z_OK && rc != Z_BUF_ERROR && rc != Z_STREAM_END) return false;
            out.append(chunk, sizeof chunk - z_.avail_out);
            if (z_.avail_out != 0 || rc == Z_STREAM_END) break;
        }
        if (reset) inflateReset(&z_);
        return z_.avail_in == 0;
    }

private:
    z_stream z_;
    bool ok_ = false;
};

}  // namespace wsload
