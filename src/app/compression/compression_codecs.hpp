// One-shot compression of a body held in memory with gzip (zlib), brotli or zstd.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <rivet/compression.hpp>

namespace rivet::app {

// Whether `level` is one the coding's library has.
bool valid_level(ContentCoding coding, int level);

// Compresses `in` into `out` (replacing its contents) when the result is shorter than `limit`
// bytes; returns false, `out` unspecified, when it would not be (the libraries stop as soon as
// the output is full, so an incompressible body costs one pass, not a pass and a copy). The
// zlib and zstd contexts are kept per thread and reused: each I/O loop compresses on its own.
bool compress_body(ContentCoding coding, int level, std::string_view in, size_t limit,
                   std::string& out);

}  // namespace rivet::app
