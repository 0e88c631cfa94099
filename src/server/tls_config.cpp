#include "server/tls_config.hpp"

#include <vector>

namespace rivet::server {

namespace {

using namespace config_fields;

// tls.certificates: [{"cert": FILE, "key": FILE}, ...]. Paths are used as written: a relative
// one is relative to the working directory, as static.root and the log files are.
Field certificates() {
    return {"certificates", [](const json& v, Config& c) -> std::string {
                const std::string want = "expected a list of 1 to " +
                                         std::to_string(kMaxTlsCertificates) +
                                         " {\"cert\": FILE, \"key\": FILE}";
                if (!v.is_array()) return want + ", got " + shown(v);
                if (v.empty() || v.size() > kMaxTlsCertificates)
                    return want + ", got " + std::to_string(v.size());
                std::vector<TlsCertificate> list;
                for (size_t i = 0; i < v.size(); ++i) {
                    const json& e = v[i];
                    const std::string at = "[" + std::to_string(i) + "]";
                    if (!e.is_object())
                        return at + ": expected {\"cert\": FILE, \"key\": FILE}, got " + shown(e);
                    for (auto& [key, value] : e.items())
                        if (key != "cert" && key != "key")
                            return at + ": unknown key \"" + key + "\"";
                    TlsCertificate files;
                    for (auto [key, out] :
                         {std::pair{"cert", &files.cert_file}, std::pair{"key", &files.key_file}}) {
                        auto f = e.find(key);
                        if (f == e.end()) return at + ": \"" + key + "\" is missing";
                        if (!f->is_string() || f->get<std::string>().empty())
                            return at + "." + key + ": expected a file path, got " + shown(*f);
                        *out = f->get<std::string>();
                    }
                    list.push_back(std::move(files));
                }
                c.run.tls.certificates = std::move(list);
                return {};
            }};
}

// tls.host: "" (the plain listener's address) or a numeric address.
Field tls_host() {
    return {"host", [](const json& v, Config& c) -> std::string {
                if (v.is_string() && v.get<std::string>().empty()) {
                    c.run.tls.host.clear();
                    return {};
                }
                return address("", REF(run.tls.host)).set(v, c);
            }};
}

// tls.session_tickets: false turns tickets off (ticket_key_lifetime 0); true keeps the lifetime.
Field session_tickets() {
    return {"session_tickets", [](const json& v, Config& c) -> std::string {
                if (!v.is_boolean()) return "expected true or false, got " + shown(v);
                uint32_t& lifetime = c.run.tls.ticket_key_lifetime_s;
                if (!v.get<bool>())
                    lifetime = 0;
                else if (lifetime == 0)
                    lifetime = TlsOptions{}.ticket_key_lifetime_s;
                return {};
            }};
}

Field ciphers() {
    return {"ciphers", [](const json& v, Config& c) -> std::string {
                if (!v.is_string())
                    return "expected an OpenSSL cipher list (\"\" for the default), got " +
                           shown(v);
                c.run.tls.ciphers = v.get<std::string>();
                return {};
            }};
}

}  // namespace

Section tls_section() {
    return {
        "tls",
        {
            certificates(),
            tls_host(),
            integer<uint16_t>("port", 0, 65535, REF(run.tls.port)),
            choice<std::string>("min_version", {{"1.2", "1.2"}, {"1.3", "1.3"}},
                                REF(run.tls.min_version)),
            ciphers(),
            boolean("allow_expired", REF(run.tls.allow_expired)),
            // Before session_tickets, so that false wins whatever the file's order.
            integer<uint32_t>("ticket_key_lifetime", kMinTicketKeyLifetime, kMaxTicketKeyLifetime,
                              REF(run.tls.ticket_key_lifetime_s)),
            session_tickets(),
            integer<size_t>("session_cache", 0, kMaxSessionCache, REF(run.tls.session_cache_size)),
            boolean("redirect_http", REF(run.tls.redirect_http)),
            integer<uint64_t>("hsts", 0, kMaxHstsSeconds, REF(run.tls.hsts_max_age_s)),
            boolean("hsts_include_subdomains", REF(run.tls.hsts_include_subdomains)),
        },
        [](const Config& c) -> std::string {
            if (!c.run.tls.certificates.empty()) return {};
            return "the section turns HTTPS on and needs \"certificates\": "
                   "[{\"cert\": FILE, \"key\": FILE}]";
        }};
}

std::string check_tls_settings(const Config& c) {
    const TlsOptions& tls = c.run.tls;
    const TlsOptions defaults;
    if (tls.certificates.empty()) {
        std::string flags;
        auto given = [&](bool differs, const char* flag) {
            if (differs) flags += (flags.empty() ? "" : ", ") + std::string(flag);
        };
        given(tls.port != defaults.port, "--tls-port");
        given(tls.min_version != defaults.min_version, "--tls-min-version");
        given(tls.allow_expired, "--tls-allow-expired");
        given(tls.redirect_http, "--redirect-https");
        given(tls.hsts_max_age_s != 0, "--hsts");
        if (flags.empty()) return {};
        return flags +
               ": HTTPS is off; give --tls-cert and --tls-key (or the configuration "
               "file's tls section)";
    }
    if (tls.port == 0) return {};
    bool same_host = tls.host.empty() || tls.host == c.run.host;
    if (same_host && tls.port == c.run.port)
        return "the HTTPS port " + std::to_string(tls.port) +
               " is the plain HTTP port too (--tls-port, tls.port)";
    if (tls.port == c.run.ops.admin.admin_port)
        return "the HTTPS port " + std::to_string(tls.port) +
               " is the admin port too (--tls-port, tls.port)";
    return {};
}

}  // namespace rivet::server
