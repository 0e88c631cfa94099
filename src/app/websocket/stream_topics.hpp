// Pub/sub for Server-Sent Events (App::subscribe): which event streams are subscribed to which
// topic. An EventStream is thread-safe and sends on its own loop, so one locked map serves
// every thread; a stream is forgotten when it is met closed.
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <rivet/event_stream.hpp>

namespace rivet::app {

class StreamTopics {
public:
    // Any thread.
    void subscribe(std::string_view topic, const EventStream& stream);
    // Any thread: every open stream subscribed to `topic` gets the event `topic` with `data`.
    void publish(std::string_view topic, std::string_view data);
    void clear();  // the server stopped: its streams are closed

private:
    struct Hash {
        using is_transparent = void;
        size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
    };
    std::mutex mutex_;
    std::unordered_map<std::string, std::vector<EventStream>, Hash, std::equal_to<>> by_topic_;
};

}  // namespace rivet::app
