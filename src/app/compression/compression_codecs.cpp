#include "app/compression/compression_codecs.hpp"

#include <brotli/encode.h>
#include <zlib.h>
#include <zstd.h>

namespace rivet::app {

namespace {

// A deflate stream with a gzip wrapper, kept for the thread and reset between bodies: its
// allocation (about 256 KiB of window and hash tables) would otherwise be paid per response.
class GzipContext {
public:
    ~GzipContext() {
        if (level_ != kNone) deflateEnd(&z_);
    }

    z_stream* ready(int level) {
        if (level_ == level) {
            deflateReset(&z_);
            return &z_;
        }
        if (level_ != kNone) deflateEnd(&z_);
        level_ = kNone;
        z_ = {};
        // 15 + 16: the largest window with a gzip header and trailer; memLevel 8 is zlib's default.
        if (deflateInit2(&z_, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
            return nullptr;
        level_ = level;
        return &z_;
    }

private:
    static constexpr int kNone = -100;
    z_stream z_{};
    int level_ = kNone;
};

class ZstdContext {
public:
    ~ZstdContext() { ZSTD_freeCCtx(cctx_); }
    ZSTD_CCtx* get() {
        if (!cctx_) cctx_ = ZSTD_createCCtx();
        return cctx_;
    }

private:
    ZSTD_CCtx* cctx_ = nullptr;
};

bool gzip(int level, std::string_view in, std::string& out) {
    thread_local GzipContext context;
    z_stream* z = context.ready(level);
    if (!z) return false;
    z->next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    z->avail_in = uInt(in.size());
    z->next_out = reinterpret_cast<Bytef*>(out.data());
    z->avail_out = uInt(out.size());
    // Z_STREAM_END only when everything, trailer included, fit into `out`.
    if (deflate(z, Z_FINISH) != Z_STREAM_END) return false;
    out.resize(z->total_out);
    return true;
}

bool brotli(int level, std::string_view in, std::string& out) {
    size_t size = out.size();
    if (!BrotliEncoderCompress(level, BROTLI_DEFAULT_WINDOW, BROTLI_MODE_GENERIC, in.size(),
                               reinterpret_cast<const uint8_t*>(in.data()), &size,
                               reinterpret_cast<uint8_t*>(out.data())))
        return false;  // also when the output did not fit
    out.resize(size);
    return true;
}

bool zstd(int level, std::string_view in, std::string& out) {
    thread_local ZstdContext context;
    ZSTD_CCtx* cctx = context.get();
    if (!cctx) return false;
    size_t size = ZSTD_compressCCtx(cctx, out.data(), out.size(), in.data(), in.size(), level);
    if (ZSTD_isError(size)) return false;  // dstSize_tooSmall among them
    out.resize(size);
    return true;
}

}  // namespace

bool valid_level(ContentCoding coding, int level) {
    switch (coding) {
        case ContentCoding::Gzip:
            return level >= 1 && level <= 9;
        case ContentCoding::Brotli:
            return level >= BROTLI_MIN_QUALITY && level <= BROTLI_MAX_QUALITY;
        case ContentCoding::Zstd:
            return level >= 1 && level <= ZSTD_maxCLevel();
    }
    return false;
}

int level_for_size(ContentCoding coding, int level, size_t body_size) {
    if (body_size < kCheapLevelBodyBytes) return level;
    int cheap = level;
    switch (coding) {
        case ContentCoding::Gzip:
            cheap = kCheapGzipLevel;
            break;
        case ContentCoding::Brotli:
            cheap = kCheapBrotliLevel;
            break;
        case ContentCoding::Zstd:
            cheap = kCheapZstdLevel;
            break;
    }
    return cheap < level ? cheap : level;
}

bool compress_body(ContentCoding coding, int level, std::string_view in, size_t limit,
                   std::string& out) {
    // zlib counts in uInt; bodies this large are not compressed on the fly anyway.
    if (limit == 0 || in.size() > (size_t(1) << 31)) return false;
    out.resize(limit - 1);  // room for at most limit - 1 bytes: the result must be shorter
    switch (coding) {
        case ContentCoding::Gzip:
            return gzip(level, in, out);
        case ContentCoding::Brotli:
            return brotli(level, in, out);
        case ContentCoding::Zstd:
            return zstd(level, in, out);
    }
    return false;
}

}  // namespace rivet::app
