#include "engine/body_budget.hpp"

namespace rivet::engine {

bool BodyBudget::try_take(uint64_t n) {
    uint64_t held = held_.load();
    for (;;) {
        // seq_cst, with want(): a loop that fails here after marking itself is either seen by
        // the give_back that follows, or sees that give_back's bytes on its retry.
        const uint64_t limit = limit_.load(std::memory_order_relaxed);
        if (held != 0 && (n > limit || held > limit - n)) return false;
        if (held_.compare_exchange_weak(held, held + n)) break;
    }
    uint64_t now = held + n;
    uint64_t peak = peak_.load(std::memory_order_relaxed);
    while (now > peak && !peak_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
    }
    return true;
}

void BodyBudget::give_back(uint64_t n) {
    held_.fetch_sub(n);
    for (auto& w : wakers_)
        if (w && w->wake && w->wanted.exchange(false)) w->wake();
}

void BodyBudget::add_waker(unsigned loop, std::function<void()> wake) {
    if (wakers_.size() <= loop) wakers_.resize(loop + 1);
    wakers_[loop] = std::make_unique<Waker>();
    wakers_[loop]->wake = std::move(wake);
}

void BodyBudget::remove_waker(unsigned loop) {
    if (loop < wakers_.size() && wakers_[loop]) wakers_[loop]->wake = nullptr;
}

void BodyBudget::want(unsigned loop) {
    if (loop < wakers_.size() && wakers_[loop]) wakers_[loop]->wanted.store(true);
}

}  // namespace rivet::engine
