#include "server/event_hub.hpp"

#include <algorithm>

namespace rivet::server {

void EventHub::add(const EventStream& stream) {
    std::lock_guard lock(mutex_);
    std::erase_if(streams_, [](const EventStream& s) { return s.closed(); });
    streams_.push_back(stream);
}

std::vector<EventStream> EventHub::open_streams() {
    std::lock_guard lock(mutex_);
    std::erase_if(streams_, [](const EventStream& s) { return s.closed(); });
    return streams_;
}

size_t EventHub::publish(std::string_view event, std::string_view data, std::string_view id) {
    // Sent outside the lock: a send wakes a loop, which must not wait for the hub.
    size_t took = 0;
    for (EventStream& s : open_streams()) took += s.send(event, data, id) ? 1 : 0;
    return took;
}

size_t EventHub::size() const {
    std::lock_guard lock(mutex_);
    return streams_.size();
}

}  // namespace rivet::server
