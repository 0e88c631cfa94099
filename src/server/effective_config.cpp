// The configuration as rivet will run it (`--check-config`): every key of the file format, with
// the value that defaults, the file and the flags gave it.
#include "server/config.hpp"

namespace rivet::server {

namespace {

// Only with HTTPS on: the section's presence turns it on (and then needs a certificate), so
// that what --check-config prints reads back as the same configuration.
nlohmann::ordered_json effective_tls(const TlsOptions& tls) {
    auto certificates = nlohmann::ordered_json::array();
    for (const auto& c : tls.certificates)
        certificates.push_back({{"cert", c.cert_file}, {"key", c.key_file}});
    nlohmann::ordered_json j = {{"certificates", certificates},
                                {"host", tls.host},
                                {"port", tls.port},
                                {"min_version", tls.min_version},
                                {"ciphers", tls.ciphers},
                                {"allow_expired", tls.allow_expired},
                                {"session_tickets", tls.ticket_key_lifetime_s > 0}};
    if (tls.ticket_key_lifetime_s > 0) j["ticket_key_lifetime"] = tls.ticket_key_lifetime_s;
    j["session_cache"] = tls.session_cache_size;
    j["redirect_http"] = tls.redirect_http;
    j["hsts"] = tls.hsts_max_age_s;
    j["hsts_include_subdomains"] = tls.hsts_include_subdomains;
    return j;
}

}  // namespace

nlohmann::ordered_json effective_config(const Config& c) {
    auto secs = [](uint64_t ms) { return double(ms) / 1000.0; };
    const auto& r = c.run;
    const auto& l = r.limits;
    const auto& t = r.timeouts;
    const auto& ops = r.ops;
    nlohmann::ordered_json j;
    j["server"] = {{"host", r.host},
                   {"port", r.port},
                   {"max_connections", l.max_connections},
                   {"io_threads", r.threads},
                   {"user", c.user},
                   {"proxy_protocol", r.proxy_protocol},
                   {"proxy_trusted", r.proxy_trusted},
                   {"pid_file", c.pid_file},
                   {"upgrade_timeout", secs(c.upgrade_timeout_ms)}};
    j["threading"] = {{"thread_pool_size", r.workers}, {"max_queue_size", r.queue}};
    j["cache"] = {{"enabled", c.cache.enabled},
                  {"max_size_mb", c.cache.max_size_mb},
                  {"ttl_seconds", c.cache.ttl_seconds}};
    j["compression"] = {{"enabled", c.demo.compression}};
    j["rate_limiting"] = {{"enabled", ops.rate_limit.enabled},
                          {"requests_per_second", ops.rate_limit.requests_per_second},
                          {"burst_size", ops.rate_limit.burst},
                          {"allow", ops.rate_limit.allow},
                          {"trusted_proxies", ops.rate_limit.trusted_proxies},
                          {"max_clients", ops.rate_limit.max_clients}};
    j["logging"] = {{"access_log", ops.log.access_log},
                    {"format", log_format_name(ops.log.format)},
                    {"error_log", ops.log.error_log},
                    {"level", log_level_name(ops.log.level)},
                    {"flush_interval_ms", ops.log.flush_ms}};
    j["limits"] = {{"max_request_line", l.max_request_line},
                   {"max_header_bytes", l.max_header_bytes},
                   {"max_headers", l.max_headers},
                   {"max_body_bytes", l.max_body},
                   {"max_buffered_body_bytes", l.max_buffered_bodies},
                   {"header_timeout", secs(t.header_ms)},
                   {"body_timeout", secs(t.body_ms)},
                   {"keepalive_timeout", secs(t.idle_ms)},
                   {"write_timeout", secs(t.write_ms)},
                   {"drain_timeout", secs(t.drain_ms)},
                   {"drain_grace", secs(t.drain_grace_ms)},
                   {"handshake_timeout", secs(t.handshake_ms)},
                   {"max_requests_per_connection", l.max_requests_per_connection}};
    j["static"] = {{"root", c.demo.root}};
    j["metrics"] = {{"enabled", ops.admin.metrics},
                    {"status_page", ops.admin.status_page},
                    {"health", ops.admin.health},
                    {"admin_host", ops.admin.admin_host},
                    {"admin_port", ops.admin.admin_port}};
    if (!r.tls.certificates.empty()) j["tls"] = effective_tls(r.tls);
    return j;
}

}  // namespace rivet::server
