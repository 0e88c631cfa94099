// Pub/sub for WebSockets: which connections of each loop are subscribed to which topic. A
// published message is framed once (engine::PreparedMessage), then every loop delivers it to
// its own subscribers from a task of its own: no lock on the delivery path, and each
// subscriber sees one publisher's messages in the order they were published. A loop's first
// subscriber to a topic, and its last, are reported (the relay's interest, topic_relay.hpp).
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "app/websocket/topic_interest.hpp"
#include "engine/websocket/session.hpp"

namespace rivet::detail {
struct WebSocketCore;
}

namespace rivet::app {

class Topics {
public:
    // `post(i, task)`: runs the task on loop i's thread.
    using Post = std::function<void(unsigned loop, std::function<void()> task)>;
    // `report` (may be empty): called on the loop's thread, in the order of the changes.
    Topics(unsigned loops, Post post, TopicInterest::Report report = {});

    // On the connection's loop thread.
    void subscribe(unsigned loop, std::string_view topic, detail::WebSocketCore* ws);
    void unsubscribe(unsigned loop, std::string_view topic, detail::WebSocketCore* ws);

    // From any thread: every loop sends `message` to its subscribers of `topic`.
    void publish(std::string_view topic, std::shared_ptr<const engine::PreparedMessage> message);
    // Subscribers of `topic` on loop `loop` (its thread only; tests and metrics).
    size_t subscribers(unsigned loop, std::string_view topic) const;

private:
    using Message = std::shared_ptr<const engine::PreparedMessage>;
    // Published messages waiting for one loop's task: a burst is delivered by one task, and
    // each subscriber's share of it leaves in one write.
    struct Inbox {
        std::mutex mutex;
        std::vector<std::pair<std::string, Message>> messages;
    };
    void deliver(unsigned loop);

    struct Hash {
        using is_transparent = void;
        size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
    };
    using Subscribers = std::unordered_set<detail::WebSocketCore*>;
    using ByTopic = std::unordered_map<std::string, Subscribers, Hash, std::equal_to<>>;
    std::vector<ByTopic> loops_;  // by loop index, each touched by its loop's thread only
    std::vector<std::unique_ptr<Inbox>> inboxes_;  // by loop index
    Post post_;
    TopicInterest::Report report_;
};

}  // namespace rivet::app
