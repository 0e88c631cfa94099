// Http1Session's memory. A keep-alive connection lets go of its session whenever it is idle
// between two requests (Connection::rest) and makes a new one at the next byte, so under load a
// loop frees and makes sessions at the rate of its requests. Freed blocks are kept per thread, a
// bounded stack: the next session takes the last one freed, still warm in the cache, without a
// trip through malloc's bins (its own per-thread cache holds only 7 blocks of a size).
#include <vector>

#include "engine/http1/session.hpp"

namespace rivet::engine {

namespace {

struct SpareBlocks {
    // Enough for the sessions one busy turn of a loop lets go of; past it, malloc's.
    static constexpr size_t kMax = 512;
    std::vector<void*> blocks;
    SpareBlocks() { blocks.reserve(kMax); }
    ~SpareBlocks() {
        for (void* b : blocks) ::operator delete(b);
    }
};

thread_local SpareBlocks spare;

}  // namespace

void* Http1Session::operator new(size_t size) {
    if (size != sizeof(Http1Session) || spare.blocks.empty()) return ::operator new(size);
    void* block = spare.blocks.back();
    spare.blocks.pop_back();
    return block;
}

void Http1Session::operator delete(void* block, size_t size) {
    if (size != sizeof(Http1Session) || spare.blocks.size() >= SpareBlocks::kMax)
        return ::operator delete(block);
    spare.blocks.push_back(block);
}

}  // namespace rivet::engine
