// rivet::compression(): a middleware that compresses response bodies on the fly.
//
//   app.use(rivet::compression());                                  // zstd, br, gzip; >= 1 KiB
//   app.use("/api", rivet::compression({.codings = {rivet::ContentCoding::Gzip}}));
//
// Its after() picks a coding from the request's Accept-Encoding (RFC 9110 §12.5.3): the highest
// q-value wins, q=0 refuses, "*" stands for the codings not named, and among equal q-values the
// order of `codings` decides; an element with an invalid q-value is ignored, the first element
// of a coding counts, "x-gzip" is gzip. The precompressed static files negotiate the same way. It
// compresses only when the response is worth it and safe to transform: a compressible Content-Type,
// a body in memory of at least `min_size` bytes, a status with a full body (not 1xx, 204, 206, 304,
// nor anything with Content-Range), no Content-Encoding yet (a precompressed file) and no
// "Cache-Control: no-transform". Files sent with sendfile and streamed bodies are left as they are.
// The compressed body is sent only when it is smaller. A body of 64 KiB or more is compressed on
// the App's worker pool once every after() has run (its loop serves others meanwhile), and from 1
// MiB on at cheaper levels (brotli at most 2, zstd and gzip 1); when the pool's queue is full it is
// sent uncompressed (docs/CONFIG.md).
//
// What the response gets: Content-Encoding, "Vary: Accept-Encoding" (merged into a Vary already
// there; set on every response that could have been compressed, also when this client gets the
// identity body, so that caches keep the variants apart), a strong ETag made weak (W/"..."; a
// strong validator names one representation's exact bytes, and the weak one still matches
// If-None-Match, so 304s keep working), and no Accept-Ranges (ranges are served of the identity
// body only: a Range request is answered 206 uncompressed). HEAD gets the same fields as GET.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <rivet/middleware.hpp>

namespace rivet {

enum class ContentCoding : uint8_t {
    Gzip,    // zlib's deflate in a gzip wrapper (RFC 1952)
    Brotli,  // "br" (RFC 7932)
    Zstd,    // "zstd" (RFC 8878)
};

struct CompressionOptions {
    // The codings offered, in the server's order of preference for equal q-values. zstd first:
    // at these levels it compresses about as well as brotli and gzip-6 for a fraction of the
    // CPU, which is what on-the-fly compression pays per request; brotli before gzip for its
    // smaller output. Empty: nothing is compressed.
    std::vector<ContentCoding> codings = {ContentCoding::Zstd, ContentCoding::Brotli,
                                          ContentCoding::Gzip};
    // Bodies shorter than this are sent as they are: the coding's header and the CPU cost more
    // than the few bytes saved.
    size_t min_size = 1024;
    // Media types worth compressing (parameters such as charset are ignored; case-insensitive):
    // "type/subtype", "type/*", or "type/*+suffix" (a structured syntax suffix, RFC 6838).
    std::vector<std::string> types = {
        "text/*",
        "application/json",
        "application/*+json",
        "application/x-ndjson",
        "application/javascript",
        "application/x-javascript",
        "application/ecmascript",
        "application/xml",
        "application/*+xml",
        "image/svg+xml",
        "application/wasm",
        "font/ttf",
        "font/otf",
        "application/vnd.ms-fontobject",
    };
    // Levels: fast ones, for compressing every response as it leaves. compression() throws
    // std::invalid_argument for a level the library does not have (gzip 1..9, brotli 0..11,
    // zstd 1..22). Bodies of 1 MiB or more get at most brotli 2, zstd 1, gzip 1.
    int gzip_level = 1;
    int brotli_level = 4;
    int zstd_level = 3;
};

std::shared_ptr<Middleware> compression(CompressionOptions options = {});

// The coding's name as Content-Encoding says it: "gzip", "br", "zstd".
const char* content_coding_name(ContentCoding coding);

}  // namespace rivet
