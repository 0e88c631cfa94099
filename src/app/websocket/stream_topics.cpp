#include "app/websocket/stream_topics.hpp"

#include <algorithm>

namespace rivet::app {

void StreamTopics::report_to(TopicInterest::Report report) {
    std::lock_guard lock(mutex_);
    report_ = std::move(report);
}

void StreamTopics::subscribe(std::string_view topic, const EventStream& stream) {
    std::lock_guard lock(mutex_);
    auto it = by_topic_.find(topic);
    if (it == by_topic_.end()) {
        it = by_topic_.emplace(std::string(topic), std::vector<EventStream>{}).first;
        if (report_) report_(topic, TopicInterest::Change::First);
    }
    std::erase_if(it->second, [](const EventStream& s) { return s.closed(); });
    it->second.push_back(stream);
}

bool StreamTopics::prune(ByTopic::iterator it) {
    std::erase_if(it->second, [](const EventStream& s) { return s.closed(); });
    if (!it->second.empty()) return false;
    if (report_) report_(it->first, TopicInterest::Change::Last);
    by_topic_.erase(it);  // a topic without subscribers costs nothing
    return true;
}

void StreamTopics::publish(std::string_view topic, std::string_view data) {
    std::vector<EventStream> streams;
    {
        std::lock_guard lock(mutex_);
        auto it = by_topic_.find(topic);
        if (it == by_topic_.end() || prune(it)) return;
        streams = it->second;
    }
    // Sent outside the lock: a send wakes its loop, which must not wait for the map. Streams
    // past their soft bound still queue it (EventStream::send), until the hard bound.
    for (EventStream& s : streams) s.send(topic, data);
}

void StreamTopics::sweep() {
    std::lock_guard lock(mutex_);
    for (auto it = by_topic_.begin(); it != by_topic_.end();) {
        auto next = std::next(it);
        prune(it);
        it = next;
    }
}

void StreamTopics::clear() {
    std::lock_guard lock(mutex_);
    by_topic_.clear();
    report_ = nullptr;
}

}  // namespace rivet::app
