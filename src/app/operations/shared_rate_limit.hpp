// SharedRateLimit: the rate limit's token buckets in Redis, shared by every instance that names
// the same Redis (RateLimitOptions::redis). Each check is one atomic Lua script (EVALSHA, EVAL
// when Redis answers NOSCRIPT: after a restart or a SCRIPT FLUSH), one round trip on the
// calling loop's pipelined connection (app/redis/). The bucket is RateLimiter's, on Redis's
// clock (TIME), so instances need no common clock; a bucket idle long enough to be full again
// expires.
//
// When Redis cannot answer, the check says so (Unavailable) and the caller applies the
// configured fallback; the first failure of an outage and the first answer after it are logged,
// once each, whichever loop sees them.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include <rivet/operations.hpp>

#include "app/operations/ip_address.hpp"
#include "net/loop.hpp"
#include "redis/connection.hpp"

namespace rivet::app {

class SharedRateLimit {
public:
    // "HOST:PORT" (HOST an IP address, IPv6 in brackets); nullopt when it is not one.
    static std::optional<redis::Endpoint> parse_endpoint(std::string_view text);
    // The Redis of `options` (its `redis`, parsed) with its credentials; nullopt as above.
    static std::optional<redis::Endpoint> endpoint_of(const RateLimitOptions& options);

    struct Outcome {
        enum class Kind : uint8_t { Allowed, Refused, Unavailable };
        Kind kind = Kind::Unavailable;
        unsigned retry_after_s = 0;  // Refused: whole seconds until a token is back (>= 1)
    };
    using Done = std::function<void(Outcome)>;

    // On `loop`'s thread; `done` runs later on it, once.
    void check(net::Loop& loop, const redis::Endpoint& endpoint, const IpAddress& client,
               double rate, double burst, Done done);

    static const std::string& script();
    static const std::string& script_sha1();  // hex, as EVALSHA names it

private:
    void send(net::Loop& loop, const redis::Endpoint& endpoint, std::string key, double rate,
              double burst, bool by_sha, Done done);
    void reached(const redis::Endpoint& endpoint);
    void unreachable(const redis::Endpoint& endpoint, std::string_view why);

    std::atomic<bool> down_{false};  // an outage is under way (logged once)
};

}  // namespace rivet::app
