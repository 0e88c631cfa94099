#include "server/command_line.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <map>

#include <rivet/version.hpp>

#include "server/tls_config.hpp"

namespace rivet::server {

namespace {

template <typename T>
bool parse_number(const std::string& text, T min, T max, T& out) {
    T v{};
    auto r = std::from_chars(text.data(), text.data() + text.size(), v);
    if (r.ec != std::errc() || r.ptr != text.data() + text.size() || v < min || v > max)
        return false;
    out = v;
    return true;
}

// Seconds, fractions allowed, into milliseconds.
bool parse_seconds(const std::string& text, double min, double max, uint64_t& out_ms) {
    double v = 0;
    if (!parse_number<double>(text, min, max, v)) return false;
    out_ms = uint64_t(std::llround(v * 1000));
    return true;
}

template <typename E>
bool parse_choice(const std::string& text, std::initializer_list<std::pair<const char*, E>> names,
                  E& out) {
    for (auto& [n, e] : names)
        if (text == n) {
            out = e;
            return true;
        }
    return false;
}

enum class Outcome { Done, Help, Version, Error };

// Applies every flag but --config to `c`. Stops at the first problem, --help or --version.
Outcome apply_flags(const std::vector<std::string>& args, Config& c, std::string& error,
                    std::string& config_path, bool& check_config) {
    using Setter = std::function<bool(const std::string&)>;
    auto& run = c.run;
    auto& limits = c.run.limits;
    auto& timeouts = c.run.timeouts;
    auto& ops = c.run.ops;
    std::string tls_cert, tls_key;  // --tls-cert, --tls-key: both or neither
    std::map<std::string, Setter> options = {
        {"--config",
         [&](const std::string& v) {
             config_path = v;
             return !v.empty();
         }},
        {"--port",
         [&](const std::string& v) { return parse_number<uint16_t>(v, 0, 65535, run.port); }},
        {"--bind",
         [&](const std::string& v) {
             run.host = v;
             return !v.empty();
         }},
        {"--user",
         [&](const std::string& v) {
             c.user = v;
             return !v.empty();
         }},
        {"--pid-file",
         [&](const std::string& v) {
             c.pid_file = v;
             return !v.empty();
         }},
        {"--upgrade-timeout",
         [&](const std::string& v) { return parse_seconds(v, 0.1, 3'600, c.upgrade_timeout_ms); }},
        {"--threads",
         [&](const std::string& v) { return parse_number<unsigned>(v, 1, 1024, run.threads); }},
        {"--workers",
         [&](const std::string& v) { return parse_number<unsigned>(v, 1, 1024, run.workers); }},
        {"--queue",
         [&](const std::string& v) { return parse_number<size_t>(v, 1, 10'000'000, run.queue); }},
        {"--root",
         [&](const std::string& v) {
             c.demo.root = v;
             return !v.empty();
         }},
        {"--max-connections",
         [&](const std::string& v) {
             return parse_number<size_t>(v, 1, 10'000'000, limits.max_connections);
         }},
        {"--max-request-line",
         [&](const std::string& v) {
             return parse_number<size_t>(v, 256, 1 << 20, limits.max_request_line);
         }},
        {"--max-header-bytes",
         [&](const std::string& v) {
             return parse_number<size_t>(v, 256, 1 << 20, limits.max_header_bytes);
         }},
        {"--max-headers",
         [&](const std::string& v) {
             return parse_number<size_t>(v, 1, 10'000, limits.max_headers);
         }},
        {"--max-body",
         [&](const std::string& v) {
             return parse_number<uint64_t>(v, 0, uint64_t(1) << 40, limits.max_body);
         }},
        {"--max-buffered-bodies",
         [&](const std::string& v) {
             return parse_number<uint64_t>(v, 1, uint64_t(1) << 40, limits.max_buffered_bodies);
         }},
        {"--max-requests-per-connection",
         [&](const std::string& v) {
             return parse_number<uint32_t>(v, 0, 4'294'967'295u,
                                           limits.max_requests_per_connection);
         }},
        {"--header-timeout",
         [&](const std::string& v) { return parse_seconds(v, 0.001, 86'400, timeouts.header_ms); }},
        {"--body-timeout",
         [&](const std::string& v) { return parse_seconds(v, 0.001, 86'400, timeouts.body_ms); }},
        {"--keepalive-timeout",
         [&](const std::string& v) { return parse_seconds(v, 0.001, 86'400, timeouts.idle_ms); }},
        {"--write-timeout",
         [&](const std::string& v) { return parse_seconds(v, 0.001, 86'400, timeouts.write_ms); }},
        {"--drain-timeout",
         [&](const std::string& v) { return parse_seconds(v, 0, 3'600, timeouts.drain_ms); }},
        {"--drain-grace",
         [&](const std::string& v) { return parse_seconds(v, 0, 3'600, timeouts.drain_grace_ms); }},
        {"--access-log",
         [&](const std::string& v) {
             ops.log.access_log = v;
             return !v.empty();
         }},
        {"--error-log",
         [&](const std::string& v) {
             ops.log.error_log = v;
             return !v.empty();
         }},
        {"--log-format",
         [&](const std::string& v) {
             return parse_choice<LogFormat>(v,
                                            {{"combined", LogFormat::Combined},
                                             {"common", LogFormat::Common},
                                             {"json", LogFormat::Json}},
                                            ops.log.format);
         }},
        {"--log-level",
         [&](const std::string& v) {
             return parse_choice<LogLevel>(v,
                                           {{"error", LogLevel::Error},
                                            {"warn", LogLevel::Warn},
                                            {"info", LogLevel::Info},
                                            {"debug", LogLevel::Debug}},
                                           ops.log.level);
         }},
        {"--rate-limit",
         [&](const std::string& v) {
             double rps = 0;
             if (!parse_number<double>(v, 0, 1e9, rps)) return false;
             ops.rate_limit.enabled = rps > 0;
             if (rps > 0) ops.rate_limit.requests_per_second = rps;
             return true;
         }},
        {"--rate-burst",
         [&](const std::string& v) {
             return parse_number<double>(v, 1, 1e9, ops.rate_limit.burst);
         }},
        {"--proxy-trusted",  // CIDR[,CIDR...]
         [&](const std::string& v) {
             std::vector<std::string> items;
             for (size_t at = 0; at <= v.size() && items.size() <= kMaxProxyTrusted;) {
                 size_t comma = std::min(v.find(',', at), v.size());
                 items.push_back(v.substr(at, comma - at));
                 at = comma + 1;
             }
             if (auto problem = check_proxy_trusted(items); !problem.empty()) {
                 error = "--proxy-trusted: " + problem;
                 return false;
             }
             run.proxy_trusted = std::move(items);
             return true;
         }},
        {"--admin-port",
         [&](const std::string& v) {
             return parse_number<uint16_t>(v, 0, 65535, ops.admin.admin_port);
         }},
        {"--tls-cert",
         [&](const std::string& v) {
             tls_cert = v;
             return !v.empty();
         }},
        {"--tls-key",
         [&](const std::string& v) {
             tls_key = v;
             return !v.empty();
         }},
        {"--tls-port",
         [&](const std::string& v) { return parse_number<uint16_t>(v, 0, 65535, run.tls.port); }},
        {"--tls-min-version",
         [&](const std::string& v) {
             return parse_choice<std::string>(v, {{"1.2", "1.2"}, {"1.3", "1.3"}},
                                              run.tls.min_version);
         }},
        {"--hsts",
         [&](const std::string& v) {
             return parse_number<uint64_t>(v, 0, kMaxHstsSeconds, run.tls.hsts_max_age_s);
         }},
        {"--handshake-timeout",
         [&](const std::string& v) {
             return parse_seconds(v, kMinHandshakeTimeout, kMaxHandshakeTimeout,
                                  timeouts.handshake_ms);
         }},
    };
    // What a bad value of these should have been, after the usual "invalid value" line.
    const std::map<std::string, std::string> expected = {
        {"--tls-cert", "a PEM certificate file"},
        {"--tls-key", "a PEM private key file"},
        {"--tls-port", "a port from 0 to 65535"},
        {"--tls-min-version", "1.2 or 1.3"},
        {"--hsts", "whole seconds from 0 to " + std::to_string(kMaxHstsSeconds) + " (two years)"},
        {"--handshake-timeout", "seconds from 0.001 to 3600"},
    };
    // Flags without a value.
    std::map<std::string, std::function<void()>> switches = {
        {"--check-config", [&] { check_config = true; }},
        {"--inline-heavy", [&] { c.demo.inline_heavy = true; }},
        {"--no-compression", [&] { c.demo.compression = false; }},
        {"--proxy-protocol", [&] { run.proxy_protocol = true; }},
        {"--no-admin",
         [&] { ops.admin.metrics = ops.admin.status_page = ops.admin.health = false; }},
        {"--tls-allow-expired", [&] { run.tls.allow_expired = true; }},
        {"--redirect-https", [&] { run.tls.redirect_http = true; }},
    };
    for (size_t i = 0; i < args.size(); ++i) {
        std::string arg = args[i];
        if (arg == "--help" || arg == "-h") return Outcome::Help;
        if (arg == "--version") return Outcome::Version;
        if (auto s = switches.find(arg); s != switches.end()) {
            s->second();
            continue;
        }
        std::string value;
        bool inline_value = false;
        if (auto eq = arg.find('='); eq != std::string::npos && arg.rfind("--", 0) == 0) {
            value = arg.substr(eq + 1);
            arg = arg.substr(0, eq);
            inline_value = true;
        }
        auto it = options.find(arg);
        if (it == options.end()) {
            error = "unknown option '" + arg + "' (see rivet --help)";
            return Outcome::Error;
        }
        if (!inline_value) {
            if (i + 1 >= args.size()) {
                error = "option " + arg + " needs a value";
                return Outcome::Error;
            }
            value = args[++i];
        }
        if (!it->second(value)) {
            if (error.empty()) error = "invalid value '" + value + "' for " + arg;
            if (auto e = expected.find(arg); e != expected.end())
                error += ": expected " + e->second;
            return Outcome::Error;
        }
    }
    // One pair on the command line, in place of the file's certificates.
    if (tls_cert.empty() != tls_key.empty()) {
        error = tls_cert.empty() ? "--tls-key needs --tls-cert (the certificate it belongs to)"
                                 : "--tls-cert needs --tls-key (its private key)";
        return Outcome::Error;
    }
    if (!tls_cert.empty()) run.tls.certificates = {{tls_cert, tls_key}};
    return Outcome::Done;
}

}  // namespace

std::string usage() {
    return R"(Usage: rivet [options]

Serves the demo site and endpoints (/hello, /echo, /fibonacci, /json, /calc, /work, ...).
Every option but --config and --check-config overrides the configuration file (docs/CONFIG.md).

Options:
  --config FILE     read the JSON configuration FILE first (SIGHUP re-reads it)
  --check-config    validate the configuration, print the effective one, and exit
  --port N          TCP port to listen on (default 8080; 0 picks a free one)
  --bind ADDR       address to listen on (default 0.0.0.0; numeric IPv4 or IPv6)
  --user NAME       once the ports are bound, drop root and run as NAME (ports 80, 443)
  --threads N       I/O loops (default: one per core)
  --workers N       worker threads for CPU-heavy routes (default: one per core)
  --queue N         offloaded requests waiting for a worker before 503 (default 1024)
  --root DIR        document root holding the demo page index.html (default: public)
  --inline-heavy    run /calc, /work, large /fibonacci and /json on the I/O loops, not the workers
                    (for comparing concurrency models; it stalls other connections)
  --no-compression  send every response uncompressed (default: zstd, br or gzip as the
                    client accepts, for text, JSON, JS, XML and SVG bodies of 1 KiB or more)

Limits and timeouts (timeouts in seconds, fractions allowed):
  --max-connections N             open connections past which accepting pauses (100000)
  --max-request-line BYTES        longest request line, else 414 (8192)
  --max-header-bytes BYTES        largest header block, else 431 (16384)
  --max-headers N                 most header fields, else 431 (100)
  --max-body BYTES                largest request body, else 413 (8388608)
  --max-buffered-bodies BYTES     request body bytes buffered at once, all connections
                                  together; past it, bodies wait (268435456)
  --max-requests-per-connection N then the connection closes; 0 = no limit (0)
  --header-timeout S              to receive a whole request head (10)
  --body-timeout S                between two reads of a request body (60)
  --keepalive-timeout S           an idle keep-alive connection is closed after (60)
  --write-timeout S               between two writes that make progress (60)
  --drain-timeout S               in-flight requests get this long at shutdown (10)
  --drain-grace S                 lame duck before that drain: all still served with
                                  Connection: close, /healthz answers 503 (0)

Logs and rate limiting:
  --access-log PATH|off  access log file, "stdout", or "off" (default off)
  --log-format F         combined (default), common or json
  --error-log PATH       error log file, "stdout" or "stderr" (default stderr)
  --log-level L          error, warn, info (default) or debug
  --rate-limit RPS       per-client requests per second (token bucket); 0 = off (off)
  --rate-burst N         bucket size: requests a rested client may send at once (200)

Behind a proxy (docs/OPERATIONS.md, "Behind HAProxy"):
  --proxy-protocol       read a PROXY protocol header (v1 or v2, optional) from trusted peers:
                         the access log and rate limit then see the client it names
  --proxy-trusted LIST   peers whose header is read: addresses or CIDR networks, comma-separated
                         (default with --proxy-protocol: 127.0.0.0/8,::1)

Admin endpoints (/metrics, /status, /status.json, /healthz):
  --admin-port N    serve them on 127.0.0.1:N only, not on the main port
  --no-admin        do not serve them at all

HTTPS on a second listener (docs/CONFIG.md, "tls"; the file can give several certificates):
  --tls-cert FILE        PEM certificate (then its intermediates); needs --tls-key
  --tls-key FILE         its PEM private key; needs --tls-cert
  --tls-port N           HTTPS port (default 8443; 0 picks a free one)
  --tls-min-version V    1.2 (default) or 1.3
  --tls-allow-expired    serve a certificate past its expiry (else it is refused)
  --redirect-https       answer plain-HTTP requests 308 to https:// (not /healthz, /metrics...)
  --hsts S               Strict-Transport-Security: max-age=S over HTTPS; 0 = none (0)
  --handshake-timeout S  a TLS handshake must finish within S seconds of the accept (10)

In-place upgrade (docs/OPERATIONS.md): SIGUSR2 starts the binary again on the same sockets
  --pid-file PATH        write the serving process's id there (removed at exit)
  --upgrade-timeout S    a new process must serve within S seconds, else it is stopped (30)
  rivet --upgrade --pid-file PATH | --config FILE [--timeout-ms N]
                         signal the rivet named there and wait for the new process (30000 ms)

Container health check (exits 0 on a 2xx answer, 1 otherwise, 2 on a bad URL):
  rivet --healthcheck http://HOST:PORT/PATH [--timeout-ms N]   (default 2000 ms)

  --help            show this help
  --version         show the version
)";
}

std::string version_line() {
    return "rivet " RIVET_VERSION_STRING "\n";
}

CommandLine parse_command_line(const std::vector<std::string>& args) {
    CommandLine cl;
    static_cast<Config&>(cl) = default_config();
    // First pass on a scratch copy: the flags' own errors, --help, --version and --config.
    Config scratch = cl;
    bool check = false;
    switch (apply_flags(args, scratch, cl.error, cl.config_path, check)) {
        case Outcome::Help:
            cl.action = CommandLine::Action::Help;
            return cl;
        case Outcome::Version:
            cl.action = CommandLine::Action::Version;
            return cl;
        case Outcome::Error:
            cl.action = CommandLine::Action::Error;
            return cl;
        case Outcome::Done:
            break;
    }
    if (!cl.config_path.empty()) {
        auto problems = apply_config_file(cl.config_path, cl);
        if (!problems.empty()) {
            cl.action = CommandLine::Action::Error;
            for (size_t i = 0; i < problems.size(); ++i)
                cl.error += (i ? "\nrivet: " : "") + problems[i];
            return cl;
        }
    }
    // Second pass: the flags win over the file.
    std::string ignored;
    apply_flags(args, cl, cl.error, ignored, check);
    if (auto problem = check_tls_settings(cl); !problem.empty()) {
        cl.action = CommandLine::Action::Error;
        cl.error = problem;
        return cl;
    }
    if (check) cl.action = CommandLine::Action::CheckConfig;
    return cl;
}

}  // namespace rivet::server
