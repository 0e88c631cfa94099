// Which topics this instance wants from Redis, and what its subscribed connection must send to
// get there (app::TopicRelay's bookkeeping, on loop 0; no I/O here).
//
// The holders of subscribers (each loop's WebSocket map, app/websocket/topics.hpp; the event
// streams' map, app/websocket/stream_topics.hpp) report when a topic gains its first subscriber
// there and when it loses its last; a topic is wanted while any holder has it. A wanted topic's
// channel is subscribed, an unwanted one's unsubscribed, with at most one SUBSCRIBE or
// UNSUBSCRIBE of a channel in flight: hiredis 0.14 forgets a channel's callback when an
// UNSUBSCRIBE's confirmation comes, even with a SUBSCRIBE of it sent after, whose messages would
// then be dropped. A change made meanwhile waits for the confirmation. A topic neither wanted
// nor subscribed is forgotten, so what is kept is bounded by the topics subscribed here.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace rivet::app {

class TopicInterest {
public:
    // A holder's report: its first subscriber to a topic, or its last one gone.
    enum class Change : uint8_t { First, Last };
    using Report = std::function<void(std::string_view topic, Change change)>;
    // What to send now for a topic's channel.
    enum class Send : uint8_t { Nothing, Subscribe, Unsubscribe };

    Send report(std::string_view topic, Change change);
    // Redis confirmed the topic's SUBSCRIBE, or its UNSUBSCRIBE.
    Send subscribed(std::string_view topic);
    Send unsubscribed(std::string_view topic);
    // The connection is subscribed (again): the wanted topics, each now to SUBSCRIBE. Until
    // then (and after link_lost) nothing is sent: the reports are only counted.
    std::vector<std::string> link_up();
    void link_lost();  // nothing is subscribed on Redis any more

    size_t holders(std::string_view topic) const;     // tests
    size_t topics() const { return topics_.size(); }  // kept: wanted or on Redis

private:
    // The channel on the subscribed connection. Away: not subscribed, nothing in flight.
    enum class Channel : uint8_t { Away, Subscribing, Subscribed, Unsubscribing };
    struct Topic {
        unsigned holders = 0;
        Channel channel = Channel::Away;
    };
    enum class Link : uint8_t { Down, Up };
    // What the topic needs next, now that nothing of it is in flight (may forget it).
    Send settle(std::string_view topic);

    struct Hash {
        using is_transparent = void;
        size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
    };
    std::unordered_map<std::string, Topic, Hash, std::equal_to<>> topics_;
    Link link_ = Link::Down;
};

}  // namespace rivet::app
