// HeapTrim: gives the heap's free memory back to the system after a burst of traffic.
//
// glibc keeps what free() returns in its arenas for later allocations: after a spike (large
// bodies, deeply nested JSON, many connections at once) the process would keep its peak RSS for
// ever. Once the loops go quiet after traffic, or every kBusyTicksBetweenTrims ticks under
// steady traffic, malloc_trim(0) returns the free pages of every arena. Process-wide, so one loop
// (loop 0, from its tick) drives it; elsewhere than glibc it does nothing.
#pragma once

#include <cstdint>

namespace rivet::engine {

class HeapTrim {
public:
    enum class Outcome { Trimmed, Kept };
    // About once a second, on one thread. `traffic`: a count that grows with every byte the
    // loops move (allocations follow traffic; none means nothing new to return).
    Outcome tick(uint64_t traffic);

    // Ticks of steady traffic after which the heap is trimmed even though the loops never
    // went quiet.
    static constexpr unsigned kBusyTicksBetweenTrims = 10;

private:
    enum class Heap {
        Returned,  // trimmed since the last traffic: nothing to give back
        InUse,     // traffic since the last trim: its freed memory may sit in the arenas
    };
    Heap heap_ = Heap::Returned;
    uint64_t traffic_ = 0;     // at the previous tick
    unsigned busy_ticks_ = 0;  // ticks in a row with traffic, since the last trim
};

}  // namespace rivet::engine
