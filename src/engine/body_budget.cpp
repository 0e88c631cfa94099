#include "engine/body_budget.hpp"

namespace rivet::engine {

namespace {

void raise_peak(std::atomic<uint64_t>& peak, uint64_t now) {
    uint64_t seen = peak.load(std::memory_order_relaxed);
    while (now > seen && !peak.compare_exchange_weak(seen, now, std::memory_order_relaxed)) {
    }
}

}  // namespace

bool BodyBudget::try_take(uint64_t n) {
    uint64_t held = held_.load();
    for (;;) {
        // seq_cst, with want(): a loop that fails here after marking itself is either seen by
        // the give_back that follows, or sees that give_back's bytes on its retry.
        const uint64_t limit = limit_.load(std::memory_order_relaxed);
        if (held != 0 && (n > limit || held > limit - n)) return false;
        if (held_.compare_exchange_weak(held, held + n)) break;
    }
    raise_peak(peak_, held + n);
    return true;
}

void BodyBudget::charge_output(uint64_t was, uint64_t now) {
    if (now > was) {
        output_held_.fetch_add(now - was, std::memory_order_relaxed);
        raise_peak(peak_, held_.fetch_add(now - was) + (now - was));
    } else if (was > now) {
        output_held_.fetch_sub(was - now, std::memory_order_relaxed);
        give_back(was - now);
    }
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
