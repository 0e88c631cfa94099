// redis::Connection: one connection to a Redis server, on one net::Loop, with hiredis's
// asynchronous API driven by the loop's watch and timers (no thread, no blocking call once
// connected). Commands are pipelined: each is written at once and hiredis matches the replies
// to their callbacks in order, so one connection per loop serves every command of that loop.
//
// A callback is always called, exactly once, on the loop: with the reply, or with none and the
// reason (the connection was lost, never made, or is waiting to retry). A caller that stops
// caring (a cancelled handler) simply ignores its call: the reply is still read from the
// connection, so the pipeline stays in step.
//
// A lost connection is reopened by the next command; a connect that fails (refused, timed out)
// is not tried again before `retry_ms`: meanwhile commands fail at once, so a caller with a
// fallback pays nothing while Redis is down. A Redis that keeps the connection but answers
// nothing (stopped, swapping, stuck in a slow script) counts as lost once a command has waited
// `reply_timeout_ms`: every command out fails, and the next ones wait for the retry.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "net/loop.hpp"

struct redisAsyncContext;
struct redisReply;

namespace rivet::redis {

struct Endpoint {
    std::string host = "127.0.0.1";  // an IP address (a name is resolved by hiredis, blocking)
    uint16_t port = 6379;
    uint64_t connect_timeout_ms = 2000;
    uint64_t retry_ms = 1000;          // after a failure, how long commands fail at once
    uint64_t reply_timeout_ms = 2000;  // a command unanswered this long: the connection is lost
    // AUTH on every new connection, before anything else (empty password: none); an empty
    // username is Redis's "default" user. Refused credentials make the connection lost, with
    // Redis's words as the reason.
    std::string username{};
    std::string password{};
};

// `reply`: hiredis's, valid during the call only; null when the command got no reply.
using ReplyFn = std::function<void(const redisReply* reply, std::string_view failure)>;

class Connection {
public:
    enum class State : uint8_t { Down, Connecting, Up };

    Connection(net::Loop& loop, Endpoint endpoint);
    ~Connection();  // pending callbacks are called with no reply
    Connection(const Connection&) = delete;
    Connection& operator=(const Connection&) = delete;

    // Sends one command (its arguments, binary-safe). Loop thread only.
    void command(std::span<const std::string_view> args, ReplyFn done);
    // Pub/sub (Redis's subscribed mode: such a connection carries nothing else, command() is
    // for other connections). `each` gets every push, from now on: the confirmations
    // ("subscribe" or "unsubscribe", channel, count) and the messages ("message", channel,
    // payload), until the connection ends; then once with no reply (lost, never made, or
    // waiting to retry). Loop thread only.
    void on_pushes(ReplyFn each) { on_push_ = std::move(each); }
    // SUBSCRIBE `channel`; on a connection that is down, opens it first (a subscription ended:
    // subscribe again). Not again before the channel's UNSUBSCRIBE is confirmed (hiredis 0.14
    // forgets the channel then). Loop thread only; may be called from inside a push.
    void subscribe(std::string_view channel);
    // UNSUBSCRIBE `channel`, one this connection subscribed to. Keep one other channel
    // subscribed throughout: hiredis 0.14 leaves subscribed mode when Redis counts none, and
    // asserts when a SUBSCRIBE sent meanwhile is confirmed.
    void unsubscribe(std::string_view channel);

    // The AUTH of the next connections (this one stays as it is). Loop thread only.
    void use_credentials(std::string_view username, std::string_view password) {
        if (username != endpoint_.username) endpoint_.username = username;
        if (password != endpoint_.password) endpoint_.password = password;
    }

    State state() const { return state_; }
    net::Loop& loop() const { return loop_; }
    const Endpoint& endpoint() const { return endpoint_; }
    uint64_t connects() const { return connects_; }  // connections made so far

private:
    bool open();
    void lost(std::string why);
    void set_interest(uint32_t add, uint32_t remove);
    void arm_reply_timer();
    void check_replies();
    void on_events(uint32_t events);

    static void on_connect(const redisAsyncContext* ctx, int status);
    static void on_disconnect(const redisAsyncContext* ctx, int status);
    static void on_reply(redisAsyncContext* ctx, void* reply, void* privdata);
    static void on_auth(redisAsyncContext* ctx, void* reply, void* privdata);
    void drop(std::string why);
    void pubsub(std::string_view verb, std::string_view channel);
    void pushes_ended(std::string why);  // tells on_push_, posted
    static void on_push(redisAsyncContext* ctx, void* reply, void* privdata);
    static void add_read(void* self);
    static void del_read(void* self);
    static void add_write(void* self);
    static void del_write(void* self);
    static void cleanup(void* self);

    net::Loop& loop_;
    Endpoint endpoint_;
    redisAsyncContext* ctx_ = nullptr;
    State state_ = State::Down;
    net::Loop::WatchId watch_ = 0;
    uint32_t interest_ = 0;
    net::Loop::TimerId connect_timer_ = 0;
    // When each command still unanswered was sent, oldest first (replies come in order); one
    // timer, for the oldest, however many are out.
    std::deque<uint64_t> sent_at_ms_;
    net::Loop::TimerId reply_timer_ = 0;
    uint64_t retry_at_ms_ = 0;  // Down after a failure: no new attempt before this
    std::string last_failure_;
    uint64_t connects_ = 0;
    // Every push's callback (on_pushes): hiredis calls one per channel, many times.
    ReplyFn on_push_;
    // The context whose end on_push_ has not been told yet: hiredis calls every channel's
    // callback as a context goes, and the end is told once.
    redisAsyncContext* pushes_from_ = nullptr;
    // Why the context is being freed, for the callbacks it calls with no reply ("" when hiredis
    // knows why: its error, or a close).
    std::string freeing_because_;
    bool flush_pending_ = false;  // hiredis holds output to write at the turn's end
    bool flushing_ = false;
    // The turn-end hook outlives the connection (a loop keeps its hooks): it checks this first.
    std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace rivet::redis
