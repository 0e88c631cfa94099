// rivet::Redis's command: the public words made hiredis's, its reply made a RedisReply, on the
// calling coroutine's loop.
#include <rivet/redis.hpp>

#include <exception>
#include <stdexcept>
#include <string_view>
#include <vector>

#include <hiredis/hiredis.h>

#include "app/async/loop_services.hpp"
#include "app/redis/redis_connections.hpp"

namespace rivet {

namespace {

RedisReply convert(const redisReply* r) {
    RedisReply out;
    switch (r->type) {
        case REDIS_REPLY_INTEGER:
            out.kind = RedisReply::Kind::Integer;
            out.integer = r->integer;
            break;
        case REDIS_REPLY_STRING:
            out.kind = RedisReply::Kind::String;
            out.text.assign(r->str, r->len);
            break;
        case REDIS_REPLY_STATUS:
            out.kind = RedisReply::Kind::Status;
            out.text.assign(r->str, r->len);
            break;
        case REDIS_REPLY_ERROR:
            out.kind = RedisReply::Kind::Error;
            out.text.assign(r->str, r->len);
            break;
        case REDIS_REPLY_ARRAY:
            out.kind = RedisReply::Kind::Array;
            out.elements.reserve(r->elements);
            for (size_t i = 0; i < r->elements; ++i) out.elements.push_back(convert(r->element[i]));
            break;
        default:  // REDIS_REPLY_NIL
            break;
    }
    return out;
}

}  // namespace

namespace detail {

void start_redis_command(Completion<RedisReply> c, const RedisOptions& options,
                         const std::vector<std::string>& args) {
    EventLoop* loop = EventLoop::current();
    if (!loop) throw std::logic_error("rivet::Redis: awaited off an I/O loop");
    if (args.empty()) throw std::invalid_argument("rivet::Redis: a command needs its name");
    net::Loop& net_loop = *LoopAccess::services(*loop).loop;
    redis::Endpoint endpoint{options.host,
                             options.port,
                             options.connect_timeout_ms,
                             options.retry_ms,
                             options.command_timeout_ms,
                             options.username,
                             options.password};
    std::vector<std::string_view> words(args.begin(), args.end());  // hiredis copies them
    // The callback holds only the Completion: after a cancel its done() is a no-op, while the
    // reply is still read off the connection.
    app::redis_connection(net_loop, endpoint)
        .command(words, [c](const redisReply* reply, std::string_view failure) {
            if (reply)
                c.done(convert(reply));
            else
                c.fail(std::make_exception_ptr(RedisUnavailable(std::string(failure))));
        });
}

}  // namespace detail

}  // namespace rivet
