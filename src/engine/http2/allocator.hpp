// The memory of libnghttp2's sessions: its small blocks (a stream, a header table entry, a
// queued frame: some dozens per request) come from per-thread free lists by size class, not
// from malloc each time. A session lives and dies on one loop thread, so no block crosses
// threads and nothing is locked. Each list keeps at most a bounded number of bytes; larger
// blocks go to malloc.
#pragma once

#include <nghttp2/nghttp2.h>

namespace rivet::engine {

nghttp2_mem* http2_allocator();

}  // namespace rivet::engine
