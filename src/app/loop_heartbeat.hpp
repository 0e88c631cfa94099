// Proof that every I/O loop still turns, for the service manager's watchdog: a probe (a task that
// marks the loop's slot with the probe's number) is posted to every loop, and the next check
// passes only when every loop has run it. A loop held by a handler that never returns runs no
// posted task, so its checks fail until it is free again. Costs one posted task per loop per
// check; no thread of its own (App::run's thread checks between signals).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "net/loop.hpp"

namespace rivet::app {

class LoopHeartbeat {
public:
    // Posts the first probe. The loops must outlive the checks (not the probes: a loop that
    // ends with one unrun drops it, and the slots it would mark are shared).
    explicit LoopHeartbeat(std::vector<net::Loop*> loops);
    // True when every loop has run the last probe posted; the next one is posted then. False
    // while some loop has not (the same probe stays posted: no pile of them behind a held loop).
    bool all_alive();

private:
    struct Slots {
        explicit Slots(size_t loops) : ran(loops) {}
        std::vector<std::atomic<uint64_t>> ran;  // by loop: the last probe it ran
    };
    void post_probe();

    std::vector<net::Loop*> loops_;
    std::shared_ptr<Slots> slots_;
    uint64_t probe_ = 0;  // the last one posted
};

}  // namespace rivet::app
