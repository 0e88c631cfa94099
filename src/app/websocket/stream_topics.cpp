#include "app/websocket/stream_topics.hpp"

#include <algorithm>

namespace rivet::app {

void StreamTopics::subscribe(std::string_view topic, const EventStream& stream) {
    std::lock_guard lock(mutex_);
    auto it = by_topic_.find(topic);
    if (it == by_topic_.end())
        it = by_topic_.emplace(std::string(topic), std::vector<EventStream>{}).first;
    std::erase_if(it->second, [](const EventStream& s) { return s.closed(); });
    it->second.push_back(stream);
}

void StreamTopics::publish(std::string_view topic, std::string_view data) {
    std::vector<EventStream> streams;
    {
        std::lock_guard lock(mutex_);
        auto it = by_topic_.find(topic);
        if (it == by_topic_.end()) return;
        std::erase_if(it->second, [](const EventStream& s) { return s.closed(); });
        if (it->second.empty()) {
            by_topic_.erase(it);  // a topic without subscribers costs nothing
            return;
        }
        streams = it->second;
    }
    // Sent outside the lock: a send wakes its loop, which must not wait for the map. Streams
    // past their soft bound still queue it (EventStream::send), until the hard bound.
    for (EventStream& s : streams) s.send(topic, data);
}

void StreamTopics::clear() {
    std::lock_guard lock(mutex_);
    by_topic_.clear();
}

}  // namespace rivet::app
