// Http1Session's memory. A keep-alive connection lets go of its session whenever it is idle
// between two requests (Connection::rest) and makes a new one at the next byte, so under load a
// loop frees and makes sessions at the rate of its requests. Freed blocks are kept per thread, a
// bounded stack: the next session takes the last one freed, still warm in the cache, without a
// trip through malloc's bins (its own per-thread cache holds only 7 blocks of a size). Under
// AddressSanitizer every block goes back to malloc, so that a stale pointer to a retired session
// is caught rather than pointing into the next one.
#include <vector>

#include "engine/http1/session.hpp"

#if defined(__SANITIZE_ADDRESS__)
#define RIVET_SESSION_BLOCKS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RIVET_SESSION_BLOCKS 0
#endif
#endif
#ifndef RIVET_SESSION_BLOCKS
#define RIVET_SESSION_BLOCKS 1
#endif

namespace rivet::engine {

namespace {

struct SpareBlocks {
    // Enough for the sessions one busy turn of a loop lets go of (about 35 KB); past it,
    // malloc's.
    static constexpr size_t kMax = 128;
    std::vector<void*> blocks;
    bool open = true;  // false once the thread's destructors ran: blocks go back to malloc
    SpareBlocks() { blocks.reserve(kMax); }
    ~SpareBlocks() {
        open = false;
        for (void* b : blocks) ::operator delete(b);
        blocks.clear();
    }
};

thread_local SpareBlocks spare;

}  // namespace

void* Http1Session::operator new(size_t size) {
    if (!RIVET_SESSION_BLOCKS || size != sizeof(Http1Session) || spare.blocks.empty())
        return ::operator new(size);
    void* block = spare.blocks.back();
    spare.blocks.pop_back();
    return block;
}

void Http1Session::operator delete(void* block, size_t size) {
    if (!RIVET_SESSION_BLOCKS || size != sizeof(Http1Session) || !spare.open ||
        spare.blocks.size() >= SpareBlocks::kMax)
        return ::operator delete(block);
    spare.blocks.push_back(block);
}

}  // namespace rivet::engine
