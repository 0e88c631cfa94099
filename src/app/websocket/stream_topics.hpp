// Pub/sub for Server-Sent Events (App::subscribe): which event streams are subscribed to which
// topic. An EventStream is thread-safe and sends on its own loop, so one locked map serves
// every thread; a stream is forgotten when it is met closed, by a publish or by sweep(). A
// topic's first stream, and the end of its last, are reported (the relay's interest,
// topic_relay.hpp).
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <rivet/event_stream.hpp>

#include "app/websocket/topic_interest.hpp"

namespace rivet::app {

class StreamTopics {
public:
    // Before the streams subscribe (the App's start); empty: none. Called under the map's lock,
    // so the reports are in the order of the changes whatever the threads.
    void report_to(TopicInterest::Report report);
    // Any thread.
    void subscribe(std::string_view topic, const EventStream& stream);
    // Any thread: every open stream subscribed to `topic` gets the event `topic` with `data`.
    void publish(std::string_view topic, std::string_view data);
    // Any thread: forgets the closed streams, and the topics left without any. Called every
    // second (App's loop 0 tick), so that a topic nobody publishes to ends with its streams.
    void sweep();
    void clear();  // the server stopped: its streams are closed

private:
    struct Hash {
        using is_transparent = void;
        size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
    };
    using ByTopic =
        std::unordered_map<std::string, std::vector<EventStream>, Hash, std::equal_to<>>;
    // Forgets `it`'s closed streams, and the topic if none is left (then true). Under the lock.
    bool prune(ByTopic::iterator it);
    std::mutex mutex_;
    ByTopic by_topic_;
    TopicInterest::Report report_;
};

}  // namespace rivet::app
