// Topics shared by every instance through Redis pub/sub (RunOptions::pubsub Redis).
//
// Each instance holds one subscription, PSUBSCRIBE rivet:topic:*, on a connection of its own on
// loop 0 (a subscribed connection carries nothing else), and publishes with PUBLISH
// rivet:topic:<topic> on the publishing loop's pipelined connection (app/redis/), or loop 0's
// when the publisher is no I/O loop: one connection per publisher writes in order and Redis
// forwards in order, so every instance sees one publisher's messages in the order published.
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
// (100 ms, doubling, at most 2 s), logged once per outage and counted when it is back.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <rivet/websocket.hpp>

#include "app/operations/metrics.hpp"
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
    void subscribe();
    void on_push(const redisReply* reply, std::string_view failure);
    void publish_on(unsigned loop, const std::string& channel, const std::string& payload);
    std::string describe() const;

    std::vector<net::Loop*> loops_;
    redis::Endpoint endpoint_;  // the publishing connections' (app::redis_connection)
    Metrics& metrics_;
    Deliver deliver_;
    std::string origin_;  // this instance's id, random: its own messages come back with it
    redis::Connection subscriber_;
    // Loop 0's thread only (and the destructor's, after the loops).
    Link link_ = Link::Starting;
    uint64_t backoff_ms_ = kFirstBackoffMs;
    net::Loop::TimerId retry_timer_ = 0;
    static constexpr uint64_t kFirstBackoffMs = 100, kMaxBackoffMs = 2000;
};

}  // namespace rivet::app
