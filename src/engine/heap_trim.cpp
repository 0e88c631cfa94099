#include "engine/heap_trim.hpp"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace rivet::engine {

namespace {

void return_free_memory() {
#if defined(__GLIBC__)
    malloc_trim(0);  // every arena: free pages inside them too, not only at their tops
#endif
}

}  // namespace

HeapTrim::Outcome HeapTrim::tick(uint64_t traffic) {
    const bool moved = traffic != traffic_;
    traffic_ = traffic;
    if (moved) {
        heap_ = Heap::InUse;
        if (++busy_ticks_ < kBusyTicksBetweenTrims) return Outcome::Kept;
    } else if (heap_ == Heap::Returned) {
        return Outcome::Kept;  // quiet, and nothing allocated since the last trim
    }
    return_free_memory();
    heap_ = moved ? Heap::InUse : Heap::Returned;
    busy_ticks_ = 0;
    return Outcome::Trimmed;
}

}  // namespace rivet::engine
