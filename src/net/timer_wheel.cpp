#include "net/timer_wheel.hpp"

#include <algorithm>
#include <bit>
#include <climits>
#include <limits>

namespace rivet::net {

namespace {

constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();

}  // namespace

// Invariant outside advance(): every armed timer is linked in slot (tick_ & mask_), and tick_ is
// after current_tick_ but no later than the first tick at which its deadline can be honoured, so
// it is visited in time. Ticks more than one revolution ahead share a slot with nearer ones;
// visiting such a timer early just re-links it.
TimerWheel::TimerWheel(uint64_t now_ms, uint64_t tick_ms, size_t slots)
    : tick_ms_(std::max<uint64_t>(tick_ms, 1)), now_(now_ms) {
    // The slot index is a mask, so a size that is not a power of two is rounded up.
    size_t n = std::bit_ceil(std::max<size_t>(slots, 1));
    slots_.assign(n, nullptr);
    occupied_.assign((n + 63) / 64, 0);
    mask_ = n - 1;
    current_tick_ = now_ / tick_ms_;
}

TimerWheel::~TimerWheel() {
    // Leave the timers disarmed so that an owner outliving the wheel does not see itself armed.
    for (Timer* head : slots_) {
        while (head) {
            Timer* next = head->next_;
            head->prev_ = head->next_ = nullptr;
            head->deadline_ = 0;
            head->tick_ = 0;
            head = next;
        }
    }
}

uint64_t TimerWheel::tick_for(uint64_t deadline) const {
    uint64_t tick = deadline / tick_ms_ + (deadline % tick_ms_ != 0);
    // A tick at or before current_tick_ has been processed already (or is being processed by
    // advance()), so the earliest it can go is the next one. Inside advance() this also keeps a
    // timer scheduled by a callback from firing again in the same advance().
    return std::max(tick, current_tick_ + 1);
}

void TimerWheel::schedule(Timer& t, uint64_t delay_ms) {
    uint64_t deadline = delay_ms > kMax - now_ ? kMax : now_ + delay_ms;
    if (deadline == 0) deadline = 1;  // 0 means "not armed"
    uint64_t tick = tick_for(deadline);
    if (t.tick_ != 0) {
        // Hot path: a later deadline is noticed when the current slot comes due.
        if (tick >= t.tick_) {
            t.deadline_ = deadline;
            return;
        }
        unlink(t);
    } else {
        ++armed_;
    }
    t.deadline_ = deadline;
    link(t, tick);
}

void TimerWheel::cancel(Timer& t) {
    if (t.tick_ == 0) return;
    unlink(t);
    t.deadline_ = 0;
    --armed_;
}

void TimerWheel::link(Timer& t, uint64_t tick) {
    size_t idx = tick & mask_;
    Timer* head = slots_[idx];
    t.tick_ = tick;
    t.prev_ = nullptr;
    t.next_ = head;
    if (head) head->prev_ = &t;
    slots_[idx] = &t;
    occupied_[idx >> 6] |= uint64_t{1} << (idx & 63);
}

void TimerWheel::unlink(Timer& t) {
    if (t.next_) t.next_->prev_ = t.prev_;
    if (t.prev_) {
        t.prev_->next_ = t.next_;
    } else {
        // A list head is either its slot's head or, during advance(), the detached list's head.
        size_t idx = t.tick_ & mask_;
        if (slots_[idx] == &t) {
            slots_[idx] = t.next_;
            if (!t.next_) occupied_[idx >> 6] &= ~(uint64_t{1} << (idx & 63));
        } else {
            pending_ = t.next_;
        }
    }
    t.prev_ = t.next_ = nullptr;
    t.tick_ = 0;
}

void TimerWheel::advance(uint64_t now_ms) {
    if (now_ms <= now_) return;  // a clock that steps back is treated as standing still
    now_ = now_ms;
    uint64_t last = now_ / tick_ms_;
    if (last <= current_tick_) return;
    uint64_t first = current_tick_ + 1;
    // After a jump, one revolution visits every slot; the ticks skipped held nothing that is not
    // also found by that visit, since everything due is fired regardless of which lap it is on.
    uint64_t steps = std::min<uint64_t>(last - current_tick_, mask_ + 1);
    // Set before the walk so that timers (re)linked meanwhile land after `last`: each timer then
    // fires at most once per advance(), and a callback re-arming with delay 0 cannot loop.
    current_tick_ = last;

    for (uint64_t i = 0; i < steps; ++i) {
        size_t idx = (first + i) & mask_;
        // Detach the slot so that re-linking into it (a later lap) does not revisit the timer now.
        pending_ = slots_[idx];
        slots_[idx] = nullptr;
        occupied_[idx >> 6] &= ~(uint64_t{1} << (idx & 63));
        while (pending_) {
            Timer* t = pending_;
            pending_ = t->next_;
            if (pending_) pending_->prev_ = nullptr;
            t->next_ = nullptr;
            // tick_ > last only for timers linked during this advance() into a slot not yet
            // visited (possible only in a full-revolution walk); they wait for a later advance().
            if (t->deadline_ <= now_ && t->tick_ <= last) {
                t->tick_ = 0;
                t->deadline_ = 0;
                --armed_;
                // Last use of t: the callback may re-arm or destroy it.
                t->on_timeout();
            } else {
                link(*t, tick_for(t->deadline_));
            }
        }
    }
}

int TimerWheel::next_timeout_ms() const {
    if (armed_ == 0) return -1;
    // Scan the occupancy bitmap round the wheel from the next tick; a timer on a later lap only
    // makes the answer earlier than needed, which is allowed.
    const size_t words = occupied_.size();
    const size_t start = (current_tick_ + 1) & mask_;
    size_t w = start >> 6;
    uint64_t bits = occupied_[w] & (~uint64_t{0} << (start & 63));
    for (size_t n = 0; n <= words; ++n) {
        if (bits) {
            size_t idx = (w << 6) + static_cast<size_t>(std::countr_zero(bits));
            uint64_t tick = current_tick_ + 1 + ((idx - start) & mask_);
            uint64_t at = tick > kMax / tick_ms_ ? kMax : tick * tick_ms_;
            uint64_t ms = at - now_;  // > 0: tick > current_tick_ == now_ / tick_ms_
            return ms > INT_MAX ? INT_MAX : static_cast<int>(ms);
        }
        w = w + 1 == words ? 0 : w + 1;
        bits = occupied_[w];
    }
    return -1;  // unreachable while armed_ > 0
}

}  // namespace rivet::net
