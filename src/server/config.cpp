#include "server/config.hpp"

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <sstream>

#include <fcntl.h>
#include <unistd.h>

#include "net/ip_network.hpp"
#include "server/config_fields.hpp"
#include "server/json_lines.hpp"
#include "server/tls_config.hpp"

namespace rivet::server {

namespace {

using namespace config_fields;

constexpr size_t kMaxConfigDepth = 16;

// server.proxy_trusted: a list of addresses or networks, bounded (check_proxy_trusted).
Field proxy_trusted(const char* name) {
    return {name, [](const json& v, Config& c) -> std::string {
                if (!v.is_array())
                    return "expected a list of addresses or CIDR networks, got " + shown(v);
                std::vector<std::string> items;
                for (const auto& e : v) {
                    if (!e.is_string())
                        return "expected addresses or CIDR networks; " + shown(e) + " is not one";
                    items.push_back(e.get<std::string>());
                    if (items.size() > kMaxProxyTrusted) break;  // enough to say it is too many
                }
                if (auto problem = check_proxy_trusted(items); !problem.empty()) return problem;
                c.run.proxy_trusted = std::move(items);
                return {};
            }};
}

const std::vector<Section>& schema() {
    static const std::vector<Section> sections = {
        {"server",
         {
             address("host", REF(run.host)),
             integer<uint16_t>("port", 0, 65535, REF(run.port)),
             integer<size_t>("max_connections", 1, 10'000'000, REF(run.limits.max_connections)),
             // Seed 003's one timeout for a silent socket: the keep-alive, body and write
             // timeouts at once (limits.* set them one by one, and win).
             {"socket_timeout",
              [](const json& v, Config& c) -> std::string {
                  uint64_t ms = 0;
                  auto f = seconds("", 0.001, 86'400, [&](Config&) -> uint64_t& { return ms; });
                  if (auto e = f.set(v, c); !e.empty()) return e;
                  c.run.timeouts.idle_ms = c.run.timeouts.body_ms = c.run.timeouts.write_ms = ms;
                  return {};
              }},
             integer<unsigned>("io_threads", 0, 1024, REF(run.threads)),
             // "" (what --check-config prints when none is set): stay who started rivet.
             {"user",
              [](const json& v, Config& c) -> std::string {
                  if (!v.is_string()) return "expected a user name, got " + shown(v);
                  c.user = v.get<std::string>();
                  return {};
              }},
             boolean("proxy_protocol", REF(run.proxy_protocol)),
             proxy_trusted("proxy_trusted"),
             {"pid_file",  // "" (what --check-config prints when none is set): none
              [](const json& v, Config& c) -> std::string {
                  if (!v.is_string()) return "expected a file path, got " + shown(v);
                  c.pid_file = v.get<std::string>();
                  return {};
              }},
             seconds("upgrade_timeout", 0.1, 3'600, REF(upgrade_timeout_ms)),
         }},
        {"threading",
         {
             integer<unsigned>("thread_pool_size", 0, 1024, REF(run.workers)),
             integer<size_t>("max_queue_size", 1, 10'000'000, REF(run.queue)),
         }},
        {"cache",
         {
             boolean("enabled", REF(cache.enabled)),
             integer<size_t>("max_size_mb", 0, 1'048'576, REF(cache.max_size_mb)),
             integer<unsigned>("ttl_seconds", 0, 31'536'000, REF(cache.ttl_seconds)),
         }},
        {"compression",
         {
             boolean("enabled", REF(demo.compression)),
         }},
        {"rate_limiting",
         {
             boolean("enabled", REF(run.ops.rate_limit.enabled)),
             number("requests_per_second", 0.001, 1e9, REF(run.ops.rate_limit.requests_per_second)),
             number("burst_size", 1, 1e9, REF(run.ops.rate_limit.burst)),
             networks("allow", REF(run.ops.rate_limit.allow)),
             networks("trusted_proxies", REF(run.ops.rate_limit.trusted_proxies)),
             integer<size_t>("max_clients", 64, 100'000'000, REF(run.ops.rate_limit.max_clients)),
         }},
        {"logging",
         {
             text("access_log", REF(run.ops.log.access_log)),
             choice<LogFormat>("format",
                               {{"combined", LogFormat::Combined},
                                {"common", LogFormat::Common},
                                {"json", LogFormat::Json}},
                               REF(run.ops.log.format)),
             text("error_log", REF(run.ops.log.error_log)),
             choice<LogLevel>("level",
                              {{"error", LogLevel::Error},
                               {"warn", LogLevel::Warn},
                               {"info", LogLevel::Info},
                               {"debug", LogLevel::Debug}},
                              REF(run.ops.log.level)),
             integer<unsigned>("flush_interval_ms", 10, 1000, REF(run.ops.log.flush_ms)),
         }},
        {"limits",
         {
             integer<size_t>("max_request_line", 256, 1 << 20, REF(run.limits.max_request_line)),
             integer<size_t>("max_header_bytes", 256, 1 << 20, REF(run.limits.max_header_bytes)),
             integer<size_t>("max_headers", 1, 10'000, REF(run.limits.max_headers)),
             integer<uint64_t>("max_body_bytes", 0, int64_t(1) << 40, REF(run.limits.max_body)),
             integer<uint64_t>("max_buffered_body_bytes", 1, int64_t(1) << 40,
                               REF(run.limits.max_buffered_bodies)),
             seconds("header_timeout", 0.001, 86'400, REF(run.timeouts.header_ms)),
             seconds("body_timeout", 0.001, 86'400, REF(run.timeouts.body_ms)),
             seconds("keepalive_timeout", 0.001, 86'400, REF(run.timeouts.idle_ms)),
             seconds("write_timeout", 0.001, 86'400, REF(run.timeouts.write_ms)),
             seconds("drain_timeout", 0, 3'600, REF(run.timeouts.drain_ms)),
             seconds("drain_grace", 0, 3'600, REF(run.timeouts.drain_grace_ms)),
             seconds("handshake_timeout", kMinHandshakeTimeout, kMaxHandshakeTimeout,
                     REF(run.timeouts.handshake_ms)),
             integer<uint32_t>("max_requests_per_connection", 0, 4'294'967'295,
                               REF(run.limits.max_requests_per_connection)),
         }},
        {"static",
         {
             text("root", REF(demo.root)),
         }},
        {"metrics",
         {
             boolean("enabled", REF(run.ops.admin.metrics)),
             boolean("status_page", REF(run.ops.admin.status_page)),
             boolean("health", REF(run.ops.admin.health)),
             address("admin_host", REF(run.ops.admin.admin_host)),
             integer<uint16_t>("admin_port", 0, 65535, REF(run.ops.admin.admin_port)),
         }},
        tls_section(),
    };
    return sections;
}

}  // namespace

std::string check_proxy_trusted(const std::vector<std::string>& entries) {
    if (entries.size() > kMaxProxyTrusted)
        return "more than " + std::to_string(kMaxProxyTrusted) + " addresses or networks";
    for (const auto& e : entries) {
        net::IpNetwork n;
        if (!net::parse_network(e, n)) return "\"" + e + "\" is not an address or CIDR network";
    }
    return {};
}

Config default_config() {
    Config c;
    c.run.ops.admin.metrics = true;
    c.run.ops.admin.status_page = true;
    c.run.ops.admin.health = true;
    return c;
}

void apply_cache_options(Config& c) {
    auto& files = c.demo.files;
    files.cache_bytes = c.cache.enabled ? uint64_t(c.cache.max_size_mb) << 20 : 0;
    files.cache_ttl =
        std::chrono::milliseconds(c.cache.enabled ? uint64_t(c.cache.ttl_seconds) * 1000 : 0);
}

std::vector<std::string> apply_config_text(const std::string& text, const std::string& name,
                                           Config& config) {
    std::vector<std::string> problems;
    // The schema nests three levels (an object, its sections, a list of networks); a document
    // much deeper is a mistake or an attack, and would cost memory per level below.
    if (size_t at = json_too_deep_at(text, kMaxConfigDepth); at != std::string_view::npos)
        return {name + ":" + std::to_string(line_of_offset(text, at)) + ": nested deeper than " +
                std::to_string(kMaxConfigDepth) + " levels; the configuration needs 3"};
    json doc;
    try {
        doc = json::parse(text);
    } catch (const json::parse_error& e) {
        // e.what() reads "[json.exception.parse_error.101] parse error at line 3, column 5:
        // syntax error ..."; keep what follows the first ": " after the position.
        std::string what = e.what();
        auto at = what.find("syntax error");
        std::string why = at == std::string::npos ? what : what.substr(at);
        problems.push_back(name + ":" + std::to_string(line_of_offset(text, e.byte)) +
                           ": invalid JSON: " + why);
        return problems;
    }
    auto lines = json_key_lines(text);
    auto where = [&](const std::string& pointer) {
        auto it = lines.find(pointer);
        return name + ":" + std::to_string(it == lines.end() ? 1 : it->second) + ": ";
    };
    if (!doc.is_object()) return {where("") + "the configuration must be a JSON object"};

    const auto& sections = schema();
    for (auto& [key, value] : doc.items()) {
        bool known = false;
        for (const auto& s : sections) known = known || key == s.name;
        if (!known) problems.push_back(where("/" + key) + "unknown key \"" + key + "\"");
    }
    Config next = config;
    for (const auto& s : sections) {
        auto it = doc.find(s.name);
        if (it == doc.end()) continue;
        std::string base = std::string("/") + s.name;
        if (!it->is_object()) {
            problems.push_back(where(base) + s.name + ": expected an object, got " + shown(*it));
            continue;
        }
        for (auto& [key, value] : it->items()) {
            bool known = false;
            for (const auto& f : s.fields) known = known || key == f.name;
            if (!known)
                problems.push_back(where(base + "/" + key) + "unknown key \"" + s.name + "." + key +
                                   "\"");
        }
        // In schema order, so that a broad key (server.socket_timeout) comes before the
        // narrow ones that refine it (limits.*), whatever the file's order.
        bool good = true;
        for (const auto& f : s.fields) {
            auto v = it->find(f.name);
            if (v == it->end()) continue;
            if (auto problem = f.set(*v, next); !problem.empty()) {
                problems.push_back(where(base + "/" + f.name) + s.name + "." + f.name + ": " +
                                   problem);
                good = false;
            }
        }
        if (good && s.check)
            if (auto problem = s.check(next); !problem.empty())
                problems.push_back(where(base) + s.name + ": " + problem);
    }
    if (problems.empty()) config = std::move(next);
    return problems;
}

std::vector<std::string> apply_config_file(const std::string& path, Config& config) {
    // Plain system calls: a directory or an unreadable file must say so, not read as empty.
    auto refuse = [&](int err) {
        return std::vector<std::string>{
            path + ": cannot read the configuration file: " + std::strerror(err)};
    };
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return refuse(errno);
    std::string text;
    char buf[16384];
    for (;;) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            int err = errno;
            ::close(fd);
            return refuse(err);
        }
        if (n == 0) break;
        text.append(buf, size_t(n));
        if (text.size() > (16 << 20)) {
            ::close(fd);
            return {path + ": cannot read the configuration file: larger than 16 MiB"};
        }
    }
    ::close(fd);
    return apply_config_text(text, path, config);
}

}  // namespace rivet::server
