// Topics shared by every instance through Redis pub/sub (RunOptions::pubsub Redis).
//
// Each instance subscribes, on a connection of its own on loop 0 (a subscribed connection
// carries nothing else), to the channel rivet:topic:<topic> of each topic it has subscribers
// to, and only those: what is published to the others never reaches it, so an instance's
// Redis traffic follows its own subscribers, not the whole cluster's publishing. The holders of
// subscribers (each loop's WebSockets, app::Topics; the event streams, app::StreamTopics)
// report a topic's first subscriber and its last (interest(), from their threads, posted to
// loop 0), and app::TopicInterest turns the reports into SUBSCRIBE and UNSUBSCRIBE. A topic's
// first subscriber here gets what other instances publish once Redis confirms the SUBSCRIBE.
// The connection also holds one channel of its own throughout, rivet:topic:rivet-instance-<id>
// (the anchor, under the same prefix for the ACLs that allow rivet:topic:*): its confirmation
// says the link is up, and it keeps Redis's count of our channels above zero (hiredis 0.14
// leaves subscribed mode at zero; Connection::unsubscribe).
//
// Messages are published with PUBLISH rivet:topic:<topic> on the publishing loop's pipelined
// connection (app/redis/), or loop 0's when the publisher is no I/O loop: one connection per
// publisher writes in order and Redis forwards in order, so every instance sees one publisher's
// messages in the order published.
//
// A message published here is delivered here at once by App::publish, never through Redis:
// each message carries its instance's id, and the subscription drops its own. So local
// subscribers do not wait for a round trip nor lose messages while Redis is away, and nothing
// is delivered twice. The other path (everything through Redis, own messages included) would
// order all publishers alike, but a PUBLISH whose reply was lost could not tell whether Redis
// had sent it back already: delivering it locally then might deliver it twice.
//
// While Redis cannot take a PUBLISH, the message reaches this instance's subscribers only and
// is counted (rivet_pubsub_redis_unshared_total); it is not kept for later (delivered later,
// it would arrive after newer messages). A lost subscription is made again with a backoff
// (100 ms, doubling, at most 2 s), logged once per outage and counted when it is back; then
// every topic with subscribers here is subscribed again.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <rivet/websocket.hpp>

#include "app/operations/metrics.hpp"
#include "app/websocket/topic_interest.hpp"
#include "net/loop.hpp"
#include "redis/connection.hpp"

namespace rivet::app {

class TopicRelay {
public:
    // Hands a message published by another instance to this one's subscribers (on loop 0).
    using Deliver =
        std::function<void(std::string_view topic, std::string_view message, MessageKind kind)>;
    static constexpr std::string_view kChannelPrefix = "rivet:topic:";

    // Before the loops run (registers the subscription's connection on loop 0).
    TopicRelay(std::vector<net::Loop*> loops, redis::Endpoint endpoint, Metrics& metrics,
               Deliver deliver);
    // After the loops' threads have ended.
    ~TopicRelay();
    TopicRelay(const TopicRelay&) = delete;
    TopicRelay& operator=(const TopicRelay&) = delete;

    void start();  // subscribes, from loop 0
    // Any thread: a holder's first subscriber to `topic`, or its last gone (TopicInterest). A
    // holder's reports must reach this in the order made: each holder reports from its one
    // thread, or under its lock.
    void interest(std::string_view topic, TopicInterest::Change change);
    // Any thread: PUBLISH on the calling I/O loop's connection, or on loop 0's.
    void share(std::string_view topic, std::string_view message, MessageKind kind);

    // Exposed for tests: the payload on the wire and its reading (false: not rivet's).
    static std::string envelope(std::string_view origin, std::string_view message,
                                MessageKind kind);
    struct Opened {
        std::string_view origin, message;
        MessageKind kind = MessageKind::Text;
    };
    static bool open_envelope(std::string_view payload, Opened& out);

private:
    // Starting: never subscribed yet; Retrying: lost (logged), waiting for the backoff.
    enum class Link : uint8_t { Starting, Subscribed, Retrying, Stopping };
    void subscribe();  // the anchor: the link
    void on_push(const redisReply* reply, std::string_view failure);
    void on_lost(std::string_view failure);
    void send(std::string_view topic, TopicInterest::Send what);
    void publish_on(unsigned loop, const std::string& channel, const std::string& payload);
    std::string describe() const;

    std::vector<net::Loop*> loops_;
    redis::Endpoint endpoint_;  // the publishing connections' (app::redis_connection)
    Metrics& metrics_;
    Deliver deliver_;
    std::string origin_;  // this instance's id, random: its own messages come back with it
    std::string anchor_;  // the anchor's channel (above)
    redis::Connection subscriber_;
    // Loop 0's thread only (and the destructor's, after the loops).
    Link link_ = Link::Starting;
    TopicInterest topics_;
    uint64_t backoff_ms_ = kFirstBackoffMs;
    net::Loop::TimerId retry_timer_ = 0;
    static constexpr uint64_t kFirstBackoffMs = 100, kMaxBackoffMs = 2000;
};

}  // namespace rivet::app
