#include "app/operations/shared_rate_limit.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <memory>

#include <hiredis/hiredis.h>

#include "app/operations/error_log.hpp"
#include "app/redis/redis_connections.hpp"

namespace rivet::app {

namespace {

// KEYS[1]: the client's bucket; ARGV: rate (tokens per second), burst. Returns {allowed (0/1),
// milliseconds until a token is back (when refused)}. The same arithmetic as RateLimiter's.
constexpr const char* kScript = R"lua(
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local b = redis.call('HMGET', KEYS[1], 'tokens', 'ms')
local tokens = tonumber(b[1])
local last = tonumber(b[2])
if tokens == nil or last == nil then
  tokens = burst
else
  tokens = math.min(burst, tokens + math.max(0, now - last) * rate / 1000)
end
local allowed = 0
local wait = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
else
  wait = math.ceil((1 - tokens) * 1000 / rate)
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'ms', now)
redis.call('PEXPIRE', KEYS[1], math.ceil(burst * 1000 / rate) + 1000)
return {allowed, wait}
)lua";

std::string number(double v) {
    char buf[32];
    int n = std::snprintf(buf, sizeof buf, "%.17g", v);
    return std::string(buf, size_t(n));
}

std::string describe(const redis::Endpoint& e) {
    return e.host + ":" + std::to_string(e.port);
}

}  // namespace

const std::string& SharedRateLimit::script() {
    static const std::string s = kScript;
    return s;
}

// kScript's SHA-1, as Redis names a cached script: written here rather than computed at the first
// check, when the server's OpenSSL might not be loadable (src/server/openssl_on_use.cpp). The
// unit test ScriptIsNamedByItsSha1 computes it again, so a script changed without it fails.
const std::string& SharedRateLimit::script_sha1() {
    static const std::string sha = "d78b01a6d357b55f1934d4ace148d0ffd3761860";
    return sha;
}

std::optional<redis::Endpoint> SharedRateLimit::parse_endpoint(std::string_view text) {
    size_t colon = text.rfind(':');
    if (colon == std::string_view::npos || colon == 0) return std::nullopt;
    std::string_view host = text.substr(0, colon), port_text = text.substr(colon + 1);
    if (host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    unsigned port = 0;
    auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (ec != std::errc() || end != port_text.data() + port_text.size() || port == 0 ||
        port > 65535)
        return std::nullopt;
    if (IpAddress ip; !parse_ip(host, ip))
        return std::nullopt;  // a name would be resolved blocking a loop
    redis::Endpoint e;
    e.host = std::string(host);
    e.port = uint16_t(port);
    e.connect_timeout_ms = 1000;
    e.retry_ms = 1000;
    e.reply_timeout_ms = 1000;
    return e;
}

std::optional<redis::Endpoint> SharedRateLimit::endpoint_of(const RateLimitOptions& options) {
    auto e = parse_endpoint(options.redis);
    if (e) {
        e->username = options.redis_user;
        e->password = options.redis_password;
    }
    return e;
}

void SharedRateLimit::check(net::Loop& loop, const redis::Endpoint& endpoint,
                            const IpAddress& client, double rate, double burst, Done done) {
    send(loop, endpoint, "rivet:ratelimit:" + to_string(client), rate, burst, true,
         std::move(done));
}

void SharedRateLimit::send(net::Loop& loop, const redis::Endpoint& endpoint, std::string key,
                           double rate, double burst, bool by_sha, Done done) {
    const std::string rate_text = number(rate), burst_text = number(burst);
    std::string_view words[] = {by_sha ? "EVALSHA" : "EVAL",
                                by_sha ? script_sha1() : script(),
                                "1",
                                key,
                                rate_text,
                                burst_text};
    auto on_reply = [this, &loop, endpoint, key, rate, burst, by_sha, done = std::move(done)](
                        const redisReply* r, std::string_view failure) {
        if (!r) {
            unreachable(endpoint, failure);
            return done({});
        }
        if (r->type == REDIS_REPLY_ERROR && by_sha &&
            std::string_view(r->str, r->len).starts_with("NOSCRIPT"))
            // The script is not cached there (a new or restarted Redis): EVAL loads it too.
            return send(loop, endpoint, key, rate, burst, false, done);
        reached(endpoint);
        if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
            r->element[0]->type != REDIS_REPLY_INTEGER ||
            r->element[1]->type != REDIS_REPLY_INTEGER) {
            log_error("rate limit: unexpected reply from Redis at " + describe(endpoint) +
                      (r->type == REDIS_REPLY_ERROR ? ": " + std::string(r->str, r->len) : ""));
            return done({});
        }
        if (r->element[0]->integer == 1) return done({Outcome::Kind::Allowed, 0});
        long long ms = r->element[1]->integer;
        return done({Outcome::Kind::Refused, unsigned(std::max(1LL, (ms + 999) / 1000))});
    };
    redis_connection(loop, endpoint).command(words, std::move(on_reply));
}

void SharedRateLimit::reached(const redis::Endpoint& endpoint) {
    if (down_.load(std::memory_order_relaxed) && down_.exchange(false))
        log_info("rate limit: Redis at " + describe(endpoint) + " answers again: limits shared");
}

void SharedRateLimit::unreachable(const redis::Endpoint& endpoint, std::string_view why) {
    if (!down_.load(std::memory_order_relaxed) && !down_.exchange(true))
        log_warn("rate limit: Redis at " + describe(endpoint) + " cannot answer (" +
                 std::string(why) + "): using the fallback until it does");
}

}  // namespace rivet::app
