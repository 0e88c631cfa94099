#include "app/loop_heartbeat.hpp"

namespace rivet::app {

LoopHeartbeat::LoopHeartbeat(std::vector<net::Loop*> loops)
    : loops_(std::move(loops)), slots_(std::make_shared<Slots>(loops_.size())) {
    post_probe();
}

bool LoopHeartbeat::all_alive() {
    for (const auto& ran : slots_->ran)
        if (ran.load(std::memory_order_acquire) != probe_) return false;
    post_probe();
    return true;
}

void LoopHeartbeat::post_probe() {
    ++probe_;
    for (size_t i = 0; i < loops_.size(); ++i)
        loops_[i]->post([slots = slots_, i, probe = probe_] {
            slots->ran[i].store(probe, std::memory_order_release);
        });
}

}  // namespace rivet::app
