// redis_session_store(): sessions in Redis, shared by every instance that names it, through the
// loop's Redis connection (rivet/redis.hpp). A record is a JSON string under prefix + id, with
// the session's idle timeout as its TTL, so Redis itself forgets sessions nobody comes back to.
#include <rivet/session.hpp>

#include <string>

#include "app/session/session_engine.hpp"

namespace rivet {

namespace {

class RedisSessionStore final : public AsyncSessionStore {
public:
    RedisSessionStore(RedisOptions options, std::string prefix)
        : redis_(std::move(options)), prefix_(std::move(prefix)) {}

    Task<std::optional<SessionRecord>> load_async(std::string id) override {
        RedisReply reply = checked(co_await redis_.command("GET", prefix_ + id));
        if (reply.is_nil()) co_return std::nullopt;
        // Not ours (another program wrote the key): no session, as a tampered cookie is none.
        co_return detail::record_from_text(reply.text);
    }

    Task<> save_async(std::string id, SessionRecord record, std::chrono::seconds ttl) override {
        checked(co_await redis_.command("SET", prefix_ + id, detail::record_text(record), "EX",
                                        std::to_string(ttl.count())));
    }

    Task<> remove_async(std::string id) override {
        checked(co_await redis_.command("DEL", prefix_ + id));
    }

private:
    // An error reply (out of memory, a read-only replica, a key of another type): Redis did
    // nothing, which for the session is the same as Redis being away.
    static RedisReply checked(RedisReply reply) {
        if (reply.is_error()) throw RedisUnavailable("session store: Redis answered " + reply.text);
        return reply;
    }

    Redis redis_;
    std::string prefix_;
};

}  // namespace

std::shared_ptr<AsyncSessionStore> redis_session_store(RedisOptions redis, std::string key_prefix) {
    return std::make_shared<RedisSessionStore>(std::move(redis), std::move(key_prefix));
}

}  // namespace rivet
