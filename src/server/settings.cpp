// The settings schema itself (server/settings.hpp): one entry per setting, in the file's order;
// the limits section is in limits_settings.cpp, the tls section in tls_config.cpp.
// docs/CONFIG.md explains each at length; tests/unit/server/settings_test.cpp checks that it
// lists every key here, with the same default and flag.
#include "server/settings.hpp"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>

#include "app/operations/shared_rate_limit.hpp"
#include "server/setting_kinds.hpp"

namespace rivet::server::settings {

namespace {

// server.socket_timeout: seed 003's one timeout for a silent socket, the keep-alive, body and
// write timeouts at once (limits.* set them one by one, and win). Not shown: those three are.
Value socket_timeout() {
    Value v = seconds(0.001, 86'400, REF(run.timeouts.idle_ms));
    auto set_idle = v.set;
    v.set = [set_idle](const json& value, Config& c) -> std::string {
        if (auto problem = set_idle(value, c); !problem.empty()) return problem;
        c.run.timeouts.body_ms = c.run.timeouts.write_ms = c.run.timeouts.idle_ms;
        return {};
    };
    v.get = nullptr;
    return v;
}

// server.proxy_trusted: addresses or networks, at most kMaxProxyTrusted (check_proxy_trusted
// says which entry is wrong).
Value proxy_trusted() {
    Value v = networks(REF(run.proxy_trusted));
    v.set = [](const json& value, Config& c) -> std::string {
        if (!value.is_array())
            return "expected a list of addresses or CIDR networks, got " + shown(value);
        std::vector<std::string> items;
        for (const auto& e : value) {
            if (!e.is_string())
                return "expected addresses or CIDR networks; " + shown(e) + " is not one";
            items.push_back(e.get<std::string>());
            if (items.size() > kMaxProxyTrusted) break;  // enough to say it is too many
        }
        if (auto problem = check_proxy_trusted(items); !problem.empty()) return problem;
        c.run.proxy_trusted = std::move(items);
        return {};
    };
    return v;
}

// --rate-limit RPS: the rate, and 0 turns the limit off (rate_limiting.enabled).
Value rate_limit_flag() {
    Value v = number(0, 1e9, REF(run.ops.rate_limit.requests_per_second));
    v.set = [expected = v.expected](const json& value, Config& c) -> std::string {
        if (!in_range(value, 0, 1e9)) return "expected " + expected;
        double rps = value.get<double>();
        c.run.ops.rate_limit.enabled = rps > 0;
        if (rps > 0) c.run.ops.rate_limit.requests_per_second = rps;
        return {};
    };
    return v;
}

// --no-admin: none of /metrics, /status, /healthz.
Value no_admin_flag() {
    Value v = boolean(REF(run.ops.admin.metrics));
    v.set = [](const json& value, Config& c) -> std::string {
        auto& admin = c.run.ops.admin;
        admin.metrics = admin.status_page = admin.health = value.get<bool>();
        return {};
    };
    return v;
}

Section server_section() {
    return {"server",
            "The listener",
            {
                {"host",
                 address(REF(run.host)),
                 "address to listen on, numeric IPv4 or IPv6",
                 {flag("--bind", "ADDR")}},
                {"port",
                 integer<uint16_t>(0, 65535, REF(run.port)),
                 "TCP port; 0 picks a free one",
                 {flag("--port", "N")}},
                {"max_connections",
                 integer<size_t>(1, 10'000'000, REF(run.limits.max_connections)),
                 "open connections past which accepting pauses",
                 {flag("--max-connections", "N")}},
                {"socket_timeout", socket_timeout(),
                 "seed 003's one timeout: keepalive_timeout, body_timeout, write_timeout at once"},
                {"io_threads",
                 integer<unsigned>(0, 1024, REF(run.threads)),
                 "I/O loops; 0 = one per usable CPU",
                 // 0 is the file's way to say "one per usable CPU", the flag's default.
                 {own_value(flag("--io-threads", "N", {"--threads"}),
                            integer<unsigned>(1, 1024, REF(run.threads)),
                            "I/O loops (default: one per usable CPU)")}},
                {"user",
                 text(REF(user), "a user name", true),
                 "once the ports are bound, drop root and run as NAME; \"\" = stay",
                 {flag("--user", "NAME")}},
                {"proxy_protocol",
                 boolean(REF(run.proxy_protocol)),
                 "read a PROXY header (v1, v2) from trusted peers; HTTPS: before TLS",
                 {switch_flag("--proxy-protocol", true, "")}},
                {"proxy_trusted",
                 proxy_trusted(),
                 "peers whose PROXY header is read (default 127.0.0.0/8,::1)",
                 {flag("--proxy-trusted", "LIST")}},
                {"http2",
                 boolean(REF(run.http2)),
                 "HTTP/2: ALPN h2 on HTTPS, h2c by prior knowledge on the plain port",
                 {switch_flag("--no-http2", false, "serve HTTP/1.1 only")}},
                {"pid_file",
                 text(REF(pid_file), "a file path", true),
                 "write the serving process's id there (removed at exit)",
                 {flag("--pid-file", "PATH")}},
                {"upgrade_timeout",
                 seconds(0.1, 3'600, REF(upgrade_timeout_ms)),
                 "an upgrade's new process must serve within S or is stopped",
                 {flag("--upgrade-timeout", "S")}},
            }};
}

Section threading_section() {
    return {"threading",
            "The worker pool",
            {
                {"thread_pool_size",
                 integer<unsigned>(0, 1024, REF(run.workers)),
                 "worker threads for CPU-heavy routes; 0 = one per usable CPU",
                 {own_value(flag("--thread-pool-size", "N", {"--workers"}),
                            integer<unsigned>(1, 1024, REF(run.workers)),
                            "worker threads (default: one per usable CPU)")}},
                {"max_queue_size",
                 integer<size_t>(1, 10'000'000, REF(run.queue)),
                 "offloaded requests waiting for a worker, else 503",
                 {flag("--queue", "N")}},
            }};
}

Section cache_section() {
    return {"cache",
            "The static file cache",
            {
                {"enabled", boolean(REF(cache.enabled)),
                 "false: no file bytes held, a stat per request"},
                {"max_size_mb", integer<size_t>(0, 1'048'576, REF(cache.max_size_mb)),
                 "MiB of cached file bytes, per I/O loop"},
                {"ttl_seconds", integer<unsigned>(0, 31'536'000, REF(cache.ttl_seconds)),
                 "seconds an entry is trusted before one stat checks it"},
            }};
}

Section compression_section() {
    return {"compression",
            "Compression",
            {
                {"enabled",
                 boolean(REF(demo.compression)),
                 "zstd, br or gzip as the client accepts, text bodies of 1 KiB+",
                 {switch_flag("--no-compression", false, "send every response uncompressed")}},
            }};
}

// rate_limiting.redis: "" (off) or HOST:PORT with HOST an IP address (SharedRateLimit's rule).
Value redis_endpoint() {
    Value v = text(REF(run.ops.rate_limit.redis), "HOST:PORT", /*may_be_empty=*/true);
    v.expected = "HOST:PORT with an IP address (IPv6 in brackets), or \"\" (off)";
    v.set = [expected = v.expected](const json& value, Config& c) -> std::string {
        if (!value.is_string()) return "expected " + expected + ", got " + shown(value);
        auto text = value.get<std::string>();
        if (!text.empty() && !app::SharedRateLimit::parse_endpoint(text))
            return "expected " + expected + ", got " + shown(value);
        c.run.ops.rate_limit.redis = std::move(text);
        return {};
    };
    return v;
}

// rate_limiting.redis_password_file: "" (no AUTH) or a file whose first line is the password.
Value redis_password_file() {
    Value v = text(REF(redis_password_file), "a file path", /*may_be_empty=*/true);
    v.set = [](const json& value, Config& c) -> std::string {
        if (!value.is_string()) return "expected a file path, got " + shown(value);
        const auto path = value.get<std::string>();
        std::string password;
        if (!path.empty()) {
            std::ifstream in(path);
            // The whole path: shown() would cut a long one to 60 characters.
            const std::string named = "\"" + path + "\"";
            if (!in)
                return "cannot read the Redis password from " + named + ": " + std::strerror(errno);
            if (!std::getline(in, password))
                return "the Redis password file " + named + " is empty";
            if (!password.empty() && password.back() == '\r') password.pop_back();
            if (password.empty()) return "the Redis password file " + named + " is empty";
        }
        c.redis_password_file = path;
        c.run.ops.rate_limit.redis_password = std::move(password);
        return {};
    };
    v.names_its_entries = true;  // the problem says what is wrong with the file
    return v;
}

Section rate_limiting_section() {
    return {
        "rate_limiting",
        "Rate limiting, a token bucket per client",
        {
            {"enabled", boolean(REF(run.ops.rate_limit.enabled)), "limit each client's rate"},
            {"requests_per_second",
             number(0.001, 1e9, REF(run.ops.rate_limit.requests_per_second)),
             "refill rate per client",
             {own_value(flag("--rate-limit", "RPS"), rate_limit_flag(),
                        "per-client requests per second; 0 = off (off)")}},
            {"burst_size",
             number(1, 1e9, REF(run.ops.rate_limit.burst)),
             "bucket size: requests a rested client may send at once",
             {flag("--rate-burst", "N")}},
            {"allow", networks(REF(run.ops.rate_limit.allow)),
             "addresses or CIDR networks never limited"},
            {"trusted_proxies", networks(REF(run.ops.rate_limit.trusted_proxies)),
             "peers whose X-Forwarded-For names the client"},
            {"max_clients", integer<size_t>(64, 100'000'000, REF(run.ops.rate_limit.max_clients)),
             "buckets kept: the memory bound under a flood of addresses"},
            {"redis",
             redis_endpoint(),
             "a Redis holding buckets shared by every instance naming it",
             {flag("--rate-limit-redis", "HOST:PORT")}},
            {"redis_fallback",
             choice<RateLimitFallback>({{"local", RateLimitFallback::Local},
                                        {"open", RateLimitFallback::Open},
                                        {"closed", RateLimitFallback::Closed}},
                                       REF(run.ops.rate_limit.redis_fallback)),
             "Redis unreachable: local, open or closed (503)",
             {flag("--rate-limit-redis-fallback", "MODE")}},
            {"redis_user",
             text(REF(run.ops.rate_limit.redis_user), "a Redis user name", true),
             "that Redis's ACL user (\"\": default)",
             {flag("--rate-limit-redis-user", "NAME")}},
            {"redis_password_file",
             redis_password_file(),
             "a file holding that Redis's password (AUTH); \"\": none",
             {flag("--rate-limit-redis-password-file", "FILE")}},
        }};
}

// pubsub.share "redis" uses rate_limiting.redis's address: one Redis for all shared state.
Section pubsub_section() {
    Section s{
        "pubsub",
        "Pub/sub topics (App::publish)",
        {
            {"share",
             choice<PubSub>({{"local", PubSub::Local}, {"redis", PubSub::Redis}}, REF(run.pubsub)),
             "local, or redis: every instance naming rate_limiting.redis",
             {flag("--pubsub", "MODE")}},
        }};
    s.check = [](const Config& c) -> std::string {
        if (c.run.pubsub == PubSub::Redis && c.run.ops.rate_limit.redis.empty())
            return "share \"redis\" needs rate_limiting.redis (the Redis's HOST:PORT)";
        return {};
    };
    return s;
}

Section logging_section() {
    return {"logging",
            "Logs",
            {
                {"access_log",
                 text(REF(run.ops.log.access_log)),
                 "a file, \"stdout\" or \"off\"",
                 {flag("--access-log", "PATH|off")}},
                {"format",
                 choice<LogFormat>({{"combined", LogFormat::Combined},
                                    {"common", LogFormat::Common},
                                    {"json", LogFormat::Json}},
                                   REF(run.ops.log.format)),
                 "access log format: combined, common or json",
                 {flag("--log-format", "F")}},
                {"error_log",
                 text(REF(run.ops.log.error_log)),
                 "a file, \"stdout\" or \"stderr\"",
                 {flag("--error-log", "PATH")}},
                {"level",
                 choice<LogLevel>({{"error", LogLevel::Error},
                                   {"warn", LogLevel::Warn},
                                   {"info", LogLevel::Info},
                                   {"debug", LogLevel::Debug}},
                                  REF(run.ops.log.level)),
                 "error log level: error, warn, info or debug",
                 {flag("--log-level", "L")}},
                {"flush_interval_ms", integer<unsigned>(10, 1000, REF(run.ops.log.flush_ms)),
                 "the access log reaches its file at least this often (ms)"},
            }};
}

Section static_section() {
    return {"static",
            "Static files",
            {
                {"root",
                 text(REF(demo.root)),
                 "document root holding the demo page index.html",
                 {flag("--root", "DIR")}},
                {"dot_files",
                 boolean(REF(demo.files.dot_files)),
                 "serve names starting with '.' (else 404; /.well-known/ always)",
                 {switch_flag("--dot-files", true, "")}},
                {"listing_max_entries",
                 integer<size_t>(1, 10'000'000, REF(demo.files.listing_max_entries)),
                 "rows listed per directory; past it the page says so",
                 {flag("--listing-max-entries", "N")}},
            }};
}

Section metrics_section() {
    return {
        "metrics",
        "Admin endpoints /metrics, /status, /status.json, /healthz",
        {
            {"enabled",
             boolean(REF(run.ops.admin.metrics)),
             "serve /metrics",
             {own_value(switch_flag("--no-admin", false, ""), no_admin_flag(),
                        "do not serve them at all")}},
            {"status_page", boolean(REF(run.ops.admin.status_page)), "serve /status, /status.json"},
            {"health", boolean(REF(run.ops.admin.health)), "serve /healthz"},
            {"admin_host", address(REF(run.ops.admin.admin_host)), "the admin listener's address"},
            {"admin_port",
             integer<uint16_t>(0, 65535, REF(run.ops.admin.admin_port)),
             "serve them on admin_host:N only; 0 = on the main port",
             {flag("--admin-port", "N")}},
        }};
}

}  // namespace

const std::vector<Section>& schema() {
    static const std::vector<Section> sections = {
        server_section(),        threading_section(), cache_section(),   compression_section(),
        rate_limiting_section(), pubsub_section(),    logging_section(), limits_section(),
        static_section(),        metrics_section(),   tls_section(),
    };
    return sections;
}

std::string shown_plainly(const json& v) {
    if (v.is_string()) return v.get<std::string>().empty() ? "\"\"" : v.get<std::string>();
    if (v.is_number_float() && v.get<double>() == std::floor(v.get<double>()) &&
        std::fabs(v.get<double>()) < 1e15)
        return std::to_string(int64_t(v.get<double>()));
    return v.dump();
}

}  // namespace rivet::server::settings
