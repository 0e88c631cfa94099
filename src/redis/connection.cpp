#include "redis/connection.hpp"

#include <memory>
#include <vector>

#include <hiredis/async.h>
#include <hiredis/hiredis.h>

namespace rivet::redis {

namespace {

Connection* owner(const redisAsyncContext* ctx) {
    return static_cast<Connection*>(ctx->data);
}

std::string failure_of(const redisAsyncContext* ctx, const char* otherwise) {
    return ctx && ctx->err ? std::string(ctx->errstr) : std::string(otherwise);
}

}  // namespace

Connection::Connection(net::Loop& loop, Endpoint endpoint)
    : loop_(loop), endpoint_(std::move(endpoint)) {
    // Commands written during a turn leave together at its end: a pipeline of one write(2),
    // and no epoll_ctl for write interest unless the socket refuses part of it.
    loop_.on_turn_end([this, alive = std::weak_ptr<bool>(alive_)] {
        if (alive.expired() || !flush_pending_ || !ctx_) return;
        flush_pending_ = false;
        flushing_ = true;
        redisAsyncHandleWrite(ctx_);
        flushing_ = false;
    });
}

Connection::~Connection() {
    alive_.reset();
    if (connect_timer_) loop_.cancel_timer(connect_timer_);
    if (reply_timer_) loop_.cancel_timer(reply_timer_);
    if (ctx_) {
        redisAsyncContext* ctx = ctx_;
        redisAsyncFree(ctx);  // calls the pending callbacks with no reply, then cleanup()
        ctx_ = nullptr;
    }
}

bool Connection::open() {
    if (state_ != State::Down) return true;
    if (loop_.now_ms() < retry_at_ms_) return false;
    redisAsyncContext* ctx = redisAsyncConnect(endpoint_.host.c_str(), endpoint_.port);
    if (!ctx || ctx->err) {
        last_failure_ = failure_of(ctx, "cannot allocate a connection");
        if (ctx) redisAsyncFree(ctx);
        retry_at_ms_ = loop_.now_ms() + endpoint_.retry_ms;
        return false;
    }
    ctx_ = ctx;
    ctx->data = this;
    ctx->ev.data = this;
    ctx->ev.addRead = add_read;
    ctx->ev.delRead = del_read;
    ctx->ev.addWrite = add_write;
    ctx->ev.delWrite = del_write;
    ctx->ev.cleanup = cleanup;
    redisAsyncSetConnectCallback(ctx, on_connect);
    redisAsyncSetDisconnectCallback(ctx, on_disconnect);
    state_ = State::Connecting;
    freeing_because_.clear();
    if (!endpoint_.password.empty()) {
        // Queued first, so that it goes before every command (hiredis writes once connected).
        std::vector<const char*> argv{"AUTH"};
        std::vector<size_t> lens{4};
        if (!endpoint_.username.empty()) {
            argv.push_back(endpoint_.username.c_str());
            lens.push_back(endpoint_.username.size());
        }
        argv.push_back(endpoint_.password.c_str());
        lens.push_back(endpoint_.password.size());
        redisAsyncCommandArgv(ctx, on_auth, nullptr, int(argv.size()), argv.data(), lens.data());
        sent_at_ms_.push_back(loop_.now_ms());  // AUTH too must be answered in time
        arm_reply_timer();
    }
    // hiredis waits for the connect without a bound of its own.
    connect_timer_ = loop_.call_after(endpoint_.connect_timeout_ms, [this] {
        connect_timer_ = 0;
        if (state_ != State::Connecting || !ctx_) return;
        drop("connect timed out");  // not connected: no disconnect callback, the commands fail
    });
    set_interest(net::kWritable, 0);  // the connect's completion
    return true;
}

void Connection::lost(std::string why) {
    ctx_ = nullptr;
    state_ = State::Down;
    flush_pending_ = false;
    last_failure_ = std::move(why);
    retry_at_ms_ = loop_.now_ms() + endpoint_.retry_ms;
    if (connect_timer_) loop_.cancel_timer(std::exchange(connect_timer_, 0));
    if (reply_timer_) loop_.cancel_timer(std::exchange(reply_timer_, 0));
    sent_at_ms_.clear();  // their callbacks get no reply as the context is freed
}

void Connection::arm_reply_timer() {
    if (reply_timer_ || sent_at_ms_.empty()) return;
    const uint64_t due = sent_at_ms_.front() + endpoint_.reply_timeout_ms;
    const uint64_t now = loop_.now_ms();
    reply_timer_ = loop_.call_after(due > now ? due - now : 0, [this] {
        reply_timer_ = 0;
        check_replies();
    });
}

void Connection::check_replies() {
    if (sent_at_ms_.empty() || !ctx_) return;
    if (loop_.now_ms() < sent_at_ms_.front() + endpoint_.reply_timeout_ms)
        return arm_reply_timer();  // the one it was set for was answered: the next oldest
    drop("no reply within " + std::to_string(endpoint_.reply_timeout_ms) + " ms");
}

void Connection::drop(std::string why) {
    redisAsyncContext* ctx = ctx_;
    freeing_because_ = "Redis: " + why;
    // As a connect that failed: a Redis that does not answer, or refuses us, is not asked again
    // before retry_ms (on_disconnect leaves that alone while freeing_because_ is set).
    lost(std::move(why));
    // Calls every pending callback with no reply (freeing_because_ is their reason), then
    // on_disconnect; from inside a hiredis callback, once that returns.
    redisAsyncFree(ctx);
}

void Connection::on_auth(redisAsyncContext* ctx, void* reply, void*) {
    Connection* self = owner(ctx);
    if (!self->sent_at_ms_.empty()) self->sent_at_ms_.pop_front();
    const auto* r = static_cast<const redisReply*>(reply);
    if (!r || r->type != REDIS_REPLY_ERROR || self->ctx_ != ctx) return;
    self->drop("refused the credentials (" + std::string(r->str, r->len) + ")");
}

void Connection::command(std::span<const std::string_view> args, ReplyFn done) {
    if (!open()) {
        loop_.post([done = std::move(done), why = "Redis unavailable: " + last_failure_] {
            done(nullptr, why);
        });
        return;
    }
    std::vector<const char*> argv;
    std::vector<size_t> lens;
    argv.reserve(args.size());
    lens.reserve(args.size());
    for (auto a : args) {
        argv.push_back(a.data());
        lens.push_back(a.size());
    }
    auto* fn = new ReplyFn(std::move(done));
    if (redisAsyncCommandArgv(ctx_, on_reply, fn, int(argv.size()), argv.data(), lens.data()) !=
        REDIS_OK) {
        loop_.post(
            [fn = std::shared_ptr<ReplyFn>(fn)] { (*fn)(nullptr, "Redis: command refused"); });
        return;
    }
    sent_at_ms_.push_back(loop_.now_ms());
    arm_reply_timer();
}

void Connection::subscribe(std::string_view channel) {
    pubsub("SUBSCRIBE", channel);
}

void Connection::unsubscribe(std::string_view channel) {
    pubsub("UNSUBSCRIBE", channel);
}

void Connection::pubsub(std::string_view verb, std::string_view channel) {
    if (!open()) return pushes_ended("Redis unavailable: " + last_failure_);
    const char* argv[] = {verb.data(), channel.data()};
    const size_t lens[] = {verb.size(), channel.size()};
    if (redisAsyncCommandArgv(ctx_, on_push, nullptr, 2, argv, lens) == REDIS_OK) {
        pushes_from_ = ctx_;
        return;
    }
    // Refused: the context is ending (or an UNSUBSCRIBE found nothing subscribed, which the
    // caller's anchor channel rules out). Its end reaches on_push_ if it carries a channel.
    if (pushes_from_ != ctx_) pushes_ended("Redis: command refused");
}

void Connection::pushes_ended(std::string why) {
    // Posted, as command()'s: the caller is never called back from inside its own call.
    loop_.post([this, alive = std::weak_ptr<bool>(alive_), why = std::move(why)] {
        if (!alive.expired() && on_push_) on_push_(nullptr, why);
    });
}

void Connection::on_push(redisAsyncContext* ctx, void* reply, void*) {
    Connection* self = owner(ctx);
    if (reply) {
        if (self->on_push_) self->on_push_(static_cast<const redisReply*>(reply), {});
        return;
    }
    if (self->pushes_from_ != ctx) return;  // told already: another channel of the same end
    self->pushes_from_ = nullptr;
    if (!self->on_push_) return;
    if (!self->freeing_because_.empty())
        self->on_push_(nullptr, self->freeing_because_);
    else
        self->on_push_(nullptr, "Redis connection lost: " + failure_of(ctx, "closed"));
}

void Connection::on_reply(redisAsyncContext* ctx, void* reply, void* privdata) {
    std::unique_ptr<ReplyFn> fn(static_cast<ReplyFn*>(privdata));
    // In order: this is the oldest command out. (After lost() the list is already empty.)
    Connection* self = owner(ctx);
    if (!self->sent_at_ms_.empty()) self->sent_at_ms_.pop_front();
    if (reply)
        (*fn)(static_cast<const redisReply*>(reply), {});
    else if (!self->freeing_because_.empty())
        (*fn)(nullptr, self->freeing_because_);
    else
        (*fn)(nullptr, "Redis connection lost: " + failure_of(ctx, "closed"));
}

void Connection::on_connect(const redisAsyncContext* ctx, int status) {
    Connection* self = owner(ctx);
    if (self->connect_timer_) self->loop_.cancel_timer(std::exchange(self->connect_timer_, 0));
    if (status != REDIS_OK) {
        self->lost(failure_of(ctx, "connect failed"));  // hiredis frees the context next
        return;
    }
    self->state_ = State::Up;
    ++self->connects_;
}

void Connection::on_disconnect(const redisAsyncContext* ctx, int status) {
    Connection* self = owner(ctx);
    if (!self->freeing_because_.empty()) return;  // drop(): lost() said why, and when to retry
    self->lost(status == REDIS_OK ? std::string("closed") : failure_of(ctx, "closed"));
    // A connection that worked and then closed (Redis's idle timeout, CLIENT KILL, a restart)
    // is tried again by the very next command; the retry delay is for connects that fail.
    self->retry_at_ms_ = 0;
}

void Connection::set_interest(uint32_t add, uint32_t remove) {
    if (!ctx_) return;
    uint32_t next = (interest_ | add) & ~remove;
    if (watch_ == 0) {
        interest_ = next;
        watch_ = loop_.watch(ctx_->c.fd, next, [this](uint32_t events) { on_events(events); });
    } else if (next != interest_) {
        interest_ = next;
        loop_.rewatch(watch_, next);
    }
}

void Connection::on_events(uint32_t events) {
    if (ctx_ && (events & (net::kReadable | net::kHangup))) redisAsyncHandleRead(ctx_);
    if (ctx_ && (events & (net::kWritable | net::kHangup))) redisAsyncHandleWrite(ctx_);
}

void Connection::add_read(void* self) {
    static_cast<Connection*>(self)->set_interest(net::kReadable, 0);
}
void Connection::del_read(void* self) {
    static_cast<Connection*>(self)->set_interest(0, net::kReadable);
}
void Connection::add_write(void* p) {
    auto* self = static_cast<Connection*>(p);
    if (self->state_ == State::Up && !self->flushing_)
        self->flush_pending_ = true;  // written at the turn's end
    else
        self->set_interest(net::kWritable, 0);  // the connect, or what the socket refused
}
void Connection::del_write(void* self) {
    static_cast<Connection*>(self)->set_interest(0, net::kWritable);
}
void Connection::cleanup(void* p) {
    auto* self = static_cast<Connection*>(p);
    if (self->watch_) self->loop_.unwatch(std::exchange(self->watch_, 0));
    self->interest_ = 0;
    self->flush_pending_ = false;
}

}  // namespace rivet::redis
