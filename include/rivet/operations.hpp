// What an operator configures around the handlers: access and error logs, per-client rate
// limiting, and the admin endpoints (/metrics, /status, /status.json, /healthz). Part of
// rivet::RunOptions; everything here can change while the server runs (App::reconfigure),
// except where the admin endpoints listen.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace rivet {

enum class LogFormat : uint8_t { Combined, Common, Json };
enum class LogLevel : uint8_t { Error, Warn, Info, Debug };

struct LogOptions {
    // Where each log goes: a file path (appended to, reopened on SIGHUP), "stdout", "stderr",
    // or "off" (or empty).
    std::string access_log = "off";
    LogFormat format = LogFormat::Combined;
    std::string error_log = "stderr";
    LogLevel level = LogLevel::Info;
    unsigned flush_ms = 500;  // the access log reaches its file at least this often
};

// What the shared rate limit does while its Redis cannot answer (RateLimitOptions::redis).
enum class RateLimitFallback : uint8_t {
    Local,   // each instance limits with its own buckets meanwhile (the limit multiplies)
    Open,    // no limit meanwhile
    Closed,  // every limited request is refused meanwhile (503 with Retry-After)
};

struct RateLimitOptions {
    bool enabled = false;
    double requests_per_second = 100;  // the bucket's refill rate, per client address
    double burst = 200;                // the bucket's size: requests a rested client may send
    std::vector<std::string> allow{};  // addresses or CIDRs ("10.0.0.0/8") never limited
    // Peers whose X-Forwarded-For names the client (the right-most address that is not itself
    // a trusted proxy). From anyone else the header is ignored.
    std::vector<std::string> trusted_proxies{};
    size_t max_clients = 100'000;  // buckets kept at most: the memory bound under a flood
    // "HOST:PORT" of a Redis holding the buckets, shared by every instance that names it (empty:
    // this instance's own). One atomic script per limited request, one round trip; the bucket
    // is the same token bucket (rate, burst), on Redis's clock. HOST is an IP address.
    std::string redis{};
    RateLimitFallback redis_fallback = RateLimitFallback::Local;
    // That Redis's AUTH (requirepass or an ACL user): none when the password is empty; an empty
    // user is Redis's "default". Also for the shared topics (pubsub), which use the same Redis.
    std::string redis_user{};
    std::string redis_password{};
};

struct AdminOptions {
    bool metrics = false;      // GET /metrics (Prometheus text format)
    bool status_page = false;  // GET /status (HTML) and /status.json
    bool health = false;       // GET /healthz
    // 0: the endpoints above answer on the main port. Otherwise they answer only on their own
    // listener at admin_host:admin_port (fixed at start).
    uint16_t admin_port = 0;
    std::string admin_host = "127.0.0.1";
};

struct OperationsOptions {
    LogOptions log{};
    RateLimitOptions rate_limit{};
    AdminOptions admin{};
};

const char* log_format_name(LogFormat f);
const char* log_level_name(LogLevel l);

}  // namespace rivet
