#include "app/websocket/topic_relay.hpp"

#include <algorithm>
#include <random>

#include <hiredis/hiredis.h>

#include "app/operations/error_log.hpp"
#include "app/redis/redis_connections.hpp"

namespace rivet::app {

namespace {

constexpr size_t kOriginSize = 16;  // hex digits
constexpr char kText = 't', kBinary = 'b';

std::string random_origin() {
    std::random_device device;
    std::mt19937_64 bits((uint64_t(device()) << 32) ^ device());
    static constexpr char kHex[] = "0123456789abcdef";
    std::string id(kOriginSize, '0');
    for (char& c : id) c = kHex[bits() % 16];
    return id;
}

std::string_view text_of(const redisReply* r) {
    return r && r->type == REDIS_REPLY_STRING ? std::string_view(r->str, r->len)
                                              : std::string_view{};
}

}  // namespace

TopicRelay::TopicRelay(std::vector<net::Loop*> loops, redis::Endpoint endpoint, Metrics& metrics,
                       Deliver deliver)
    : loops_(std::move(loops)),
      endpoint_(endpoint),
      metrics_(metrics),
      deliver_(std::move(deliver)),
      origin_(random_origin()),
      anchor_(std::string(kChannelPrefix) + "rivet-instance-" + origin_),
      subscriber_(*loops_.at(0), [&] {
          redis::Endpoint e = endpoint;
          e.retry_ms = 0;  // the relay's own backoff paces the attempts
          return e;
      }()) {
    subscriber_.on_pushes(
        [this](const redisReply* r, std::string_view failure) { on_push(r, failure); });
}

TopicRelay::~TopicRelay() {
    link_ = Link::Stopping;
    subscriber_.on_pushes({});  // the connection's end, as it goes, is no news to us
    if (retry_timer_) loops_[0]->cancel_timer(retry_timer_);
}

void TopicRelay::start() {
    loops_[0]->post([this] { subscribe(); });
}

void TopicRelay::subscribe() {
    retry_timer_ = 0;
    if (link_ == Link::Stopping) return;
    subscriber_.subscribe(anchor_);  // the topics follow its confirmation (on_push)
}

std::string TopicRelay::describe() const {
    return endpoint_.host + ":" + std::to_string(endpoint_.port);
}

void TopicRelay::interest(std::string_view topic, TopicInterest::Change change) {
    if (std::string_view(anchor_).substr(kChannelPrefix.size()) == topic) return;  // held always
    // Always posted, even from loop 0: the order of the queue is the order of the reports.
    loops_[0]->post(
        [this, topic = std::string(topic), change] { send(topic, topics_.report(topic, change)); });
}

void TopicRelay::send(std::string_view topic, TopicInterest::Send what) {
    if (what == TopicInterest::Send::Nothing) return;
    std::string channel = std::string(kChannelPrefix).append(topic);
    if (what == TopicInterest::Send::Subscribe)
        subscriber_.subscribe(channel);
    else
        subscriber_.unsubscribe(channel);
}

void TopicRelay::on_lost(std::string_view failure) {
    if (link_ == Link::Subscribed)
        log_warn("pub/sub: lost the subscription to Redis at " + describe() + " (" +
                 std::string(failure) +
                 "): messages published here reach this instance only until it is back");
    else if (link_ == Link::Starting)
        log_warn("pub/sub: cannot subscribe to Redis at " + describe() + " (" +
                 std::string(failure) + "): trying again until it answers");
    if (link_ != Link::Retrying) backoff_ms_ = kFirstBackoffMs;
    link_ = Link::Retrying;
    topics_.link_lost();
    retry_timer_ = loops_[0]->call_after(backoff_ms_, [this] { subscribe(); });
    backoff_ms_ = std::min(backoff_ms_ * 2, kMaxBackoffMs);
}

void TopicRelay::on_push(const redisReply* r, std::string_view failure) {
    if (link_ == Link::Stopping) return;
    if (!r) return on_lost(failure);  // the subscription ended: try again after the backoff
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 3) return;
    std::string_view kind = text_of(r->element[0]);
    std::string_view channel = text_of(r->element[1]);
    if (!channel.starts_with(kChannelPrefix)) return;
    std::string_view topic = channel.substr(kChannelPrefix.size());
    if (kind == "subscribe" && channel == anchor_) {
        if (link_ == Link::Retrying) {
            metrics_.count_pubsub(0, Metrics::PubSub::Reconnects);
            log_info("pub/sub: subscribed to Redis at " + describe() + " again: topics shared");
        } else {
            log_info("pub/sub: topics shared through Redis at " + describe());
        }
        link_ = Link::Subscribed;
        for (const std::string& t : topics_.link_up()) send(t, TopicInterest::Send::Subscribe);
        return;
    }
    if (kind == "subscribe") return send(topic, topics_.subscribed(topic));
    if (kind == "unsubscribe") return send(topic, topics_.unsubscribed(topic));
    if (kind != "message") return;
    Opened opened;
    if (!open_envelope(text_of(r->element[2]), opened) || opened.origin == origin_)
        return;  // not rivet's, or published here (and delivered here already)
    metrics_.count_pubsub(0, Metrics::PubSub::Received);
    deliver_(topic, opened.message, opened.kind);
}

void TopicRelay::share(std::string_view topic, std::string_view message, MessageKind kind) {
    std::string channel = std::string(kChannelPrefix).append(topic);
    std::string payload = envelope(origin_, message, kind);
    net::Loop* here = net::Loop::current();
    auto it = std::find(loops_.begin(), loops_.end(), here);
    if (it != loops_.end()) return publish_on(unsigned(it - loops_.begin()), channel, payload);
    // Not an I/O loop: always loop 0, whose queue keeps this thread's order.
    loops_[0]->post([this, channel = std::move(channel), payload = std::move(payload)] {
        publish_on(0, channel, payload);
    });
}

void TopicRelay::publish_on(unsigned loop, const std::string& channel, const std::string& payload) {
    std::string_view words[] = {"PUBLISH", channel, payload};
    redis_connection(*loops_[loop], endpoint_)
        .command(words, [this, loop](const redisReply* r, std::string_view) {
            if (!r || r->type == REDIS_REPLY_ERROR)
                metrics_.count_pubsub(loop, Metrics::PubSub::Unshared);
        });
}

std::string TopicRelay::envelope(std::string_view origin, std::string_view message,
                                 MessageKind kind) {
    std::string out;
    out.reserve(origin.size() + 1 + message.size());
    out.append(origin).push_back(kind == MessageKind::Binary ? kBinary : kText);
    return out.append(message);
}

bool TopicRelay::open_envelope(std::string_view payload, Opened& out) {
    if (payload.size() < kOriginSize + 1) return false;
    char kind = payload[kOriginSize];
    if (kind != kText && kind != kBinary) return false;
    out.origin = payload.substr(0, kOriginSize);
    out.kind = kind == kBinary ? MessageKind::Binary : MessageKind::Text;
    out.message = payload.substr(kOriginSize + 1);
    return true;
}

}  // namespace rivet::app
