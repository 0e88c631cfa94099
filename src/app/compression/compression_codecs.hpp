// One-shot compression of a body held in memory with gzip (zlib), brotli or zstd.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <rivet/compression.hpp>

namespace rivet::app {

// Whether `level` is one the coding's library has.
bool valid_level(ContentCoding coding, int level);

// Bodies of at least this size are compressed on a worker, not on their I/O loop (after every
// after() has run; app/app_body_work.cpp): brotli's level 4 costs about 0.4 ms per 64 KiB here,
// about what a /hello costs its loop, and 8 MiB at once held a loop for tens of milliseconds.
constexpr size_t kWorkerBodyBytes = 64 * 1024;

// From this size on, a body gets the cheaper levels below (never above the configured ones):
// measured on 8 MiB of HTML-like text, brotli 2 takes 13 ms against brotli 4's 44 ms for an
// output 2% larger; zstd 1 and gzip 1 are their libraries' fastest.
constexpr size_t kCheapLevelBodyBytes = 1024 * 1024;
constexpr int kCheapBrotliLevel = 2;
constexpr int kCheapZstdLevel = 1;
constexpr int kCheapGzipLevel = 1;

// The level a body of `body_size` bytes is compressed at, given the configured `level`.
int level_for_size(ContentCoding coding, int level, size_t body_size);

// Compresses `in` into `out` (replacing its contents) when the result is shorter than `limit`
// bytes; returns false, `out` unspecified, when it would not be (the libraries stop as soon as
// the output is full, so an incompressible body costs one pass, not a pass and a copy). The
// zlib and zstd contexts are kept per thread and reused: each I/O loop and worker compresses on its
// own.
bool compress_body(ContentCoding coding, int level, std::string_view in, size_t limit,
                   std::string& out);

}  // namespace rivet::app
