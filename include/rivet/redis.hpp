// rivet::Redis: Redis commands from a coroutine handler, without blocking its loop.
//
//   rivet::Redis redis({.host = "127.0.0.1", .port = 6379});   // cheap: options only
//   auto hits = co_await redis.command("INCR", "hits:" + user);  // any command, as its words
//   if (hits.is_error()) ...;                                    // a Redis error reply
//   auto v = co_await redis.command("GET", key);                 // v.is_nil() when absent
//
// Each I/O loop keeps one connection per Redis server, shared by every handler of that loop
// (and by the server's shared rate limit): commands are pipelined on it, replies matched in
// order, so a loop pays one connection whatever its load. A handler cancelled while its command
// is out (its client left, a with_timeout deadline) leaves the reply to be read and dropped: the
// connection stays in step for the next command.
//
// Replies are values (RedisReply), Redis's own error replies included (is_error(); Redis
// carried out nothing). When there is no reply at all (Redis unreachable, the connection lost
// with the command out) co_await throws rivet::RedisUnavailable, a std::runtime_error. A lost
// connection is reopened by the next command; after a connect that failed, not before retry_ms,
// and until then commands fail at once; a Redis that keeps the connection but does not answer
// within command_timeout_ms counts as lost too. Only from a coroutine on an I/O loop (elsewhere:
// std::logic_error). A loop's connection to one Redis (host and port) takes the timeouts of
// whatever opened it first: the server's rate limit, or the first command.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <rivet/completion.hpp>
#include <rivet/task.hpp>

namespace rivet {

struct RedisOptions {
    std::string host = "127.0.0.1";  // an IP address: a name would be resolved blocking the loop
    uint16_t port = 6379;
    unsigned connect_timeout_ms = 2000;
    unsigned retry_ms = 1000;  // after a failure, commands fail at once this long
    // A command with no reply this long: Redis is taken as unreachable (it kept the connection
    // but answers nothing: stopped, swapping, a slow script), every command out on the
    // connection throws RedisUnavailable, and the connection is reopened after retry_ms. A
    // blocking command (BLPOP ...) must block for less; it also holds every later command of
    // its loop, so keep those for a Redis of their own.
    unsigned command_timeout_ms = 2000;
    // AUTH on connecting (Redis's requirepass, or an ACL user): nothing when the password is
    // empty; an empty username is Redis's "default" user. Refused credentials: commands throw
    // RedisUnavailable with Redis's words ("WRONGPASS ..."), and are retried after retry_ms.
    std::string username{};
    std::string password{};
};

struct RedisReply {
    enum class Kind : uint8_t { Nil, Integer, String, Status, Error, Array };
    Kind kind = Kind::Nil;
    long long integer = 0;             // Integer
    std::string text;                  // String (bulk), Status ("OK"), Error ("ERR ...")
    std::vector<RedisReply> elements;  // Array

    bool is_nil() const { return kind == Kind::Nil; }
    bool is_error() const { return kind == Kind::Error; }
};

class RedisUnavailable : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

namespace detail {

void start_redis_command(Completion<RedisReply> c, const RedisOptions& options,
                         const std::vector<std::string>& args);

inline Task<RedisReply> redis_command(std::vector<std::string> args, RedisOptions options) {
    co_return co_await until_complete<RedisReply>(
        [&](Completion<RedisReply> c) { start_redis_command(std::move(c), options, args); });
}

}  // namespace detail

class Redis {
public:
    explicit Redis(RedisOptions options = {}) : options_(std::move(options)) {}

    // One command, as its words: command("SET", key, value, "EX", "60"). Binary-safe.
    template <class... Words>
    Task<RedisReply> command(Words&&... words) const {
        return detail::redis_command({std::string(std::forward<Words>(words))...}, options_);
    }
    Task<RedisReply> command(std::vector<std::string> words) const {
        return detail::redis_command(std::move(words), options_);
    }
    const RedisOptions& options() const { return options_; }

private:
    RedisOptions options_;
};

}  // namespace rivet
