#include "server/tls_config.hpp"

#include <vector>

#include "server/setting_kinds.hpp"

namespace rivet::server {

namespace {

using namespace settings;

// tls.certificates: [{"cert": FILE, "key": FILE}, ...]. Paths are used as written: a relative
// one is relative to the working directory, as static.root and the log files are.
Value certificates() {
    Value v;
    v.set = [](const json& v, Config& c) -> std::string {
        const std::string want = "expected a list of 1 to " + std::to_string(kMaxTlsCertificates) +
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
                if (key != "cert" && key != "key") return at + ": unknown key \"" + key + "\"";
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
    };
    v.get = [](const Config& c) {
        auto list = json::array();
        for (const auto& f : c.run.tls.certificates)
            list.push_back({{"cert", f.cert_file}, {"key", f.key_file}});
        return list;
    };
    v.from_text = [](const std::string&) { return std::optional<json>(); };
    return v;
}

// --tls-cert / --tls-key: one pair in place of the file's whole list (both or neither:
// command_line.cpp checks), each flag filling its half.
Flag certificate_flag(const char* name, std::string TlsCertificate::*half, const char* what,
                      const char* help) {
    Value v;
    v.set = [half](const json& value, Config& c) -> std::string {
        auto& list = c.run.tls.certificates;
        list.resize(1);
        list[0].*half = value.get<std::string>();
        return {};
    };
    v.from_text = string_text;
    Flag f{name, "FILE"};
    f.value = std::move(v);
    f.expected = what;
    f.help = help;
    return f;
}

// tls.session_tickets: false turns tickets off (ticket_key_lifetime 0); true keeps the lifetime.
Value session_tickets() {
    Value v;
    v.set = [](const json& v, Config& c) -> std::string {
        if (!v.is_boolean()) return "expected true or false, got " + shown(v);
        uint32_t& lifetime = c.run.tls.ticket_key_lifetime_s;
        if (!v.get<bool>())
            lifetime = 0;
        else if (lifetime == 0)
            lifetime = TlsOptions{}.ticket_key_lifetime_s;
        return {};
    };
    v.get = [](const Config& c) { return json(c.run.tls.ticket_key_lifetime_s > 0); };
    v.from_text = [](const std::string&) { return std::optional<json>(); };
    return v;
}

// tls.ticket_key_lifetime: shown only with tickets on, so that what --check-config prints
// reads back as the same (session_tickets false wins over it).
Value ticket_key_lifetime() {
    Value v = integer<uint32_t>(kMinTicketKeyLifetime, kMaxTicketKeyLifetime,
                                REF(run.tls.ticket_key_lifetime_s));
    v.get = [](const Config& c) {
        uint32_t lifetime = c.run.tls.ticket_key_lifetime_s;
        return lifetime > 0 ? json(lifetime) : json();
    };
    return v;
}

Flag valued_flag(const char* name, const char* metavar, std::string expected) {
    Flag f{name, metavar};
    f.expected = std::move(expected);
    return f;
}

}  // namespace

settings::Section settings::tls_section() {
    Section s{
        "tls",
        "HTTPS on a second listener; the file can give several certificates",
        {
            {"certificates",
             certificates(),
             "1 to 64 {\"cert\": FILE, \"key\": FILE}, PEM; the first is the default",
             {certificate_flag("--tls-cert", &TlsCertificate::cert_file, "a PEM certificate file",
                               "PEM certificate (then its intermediates); needs --tls-key"),
              certificate_flag("--tls-key", &TlsCertificate::key_file, "a PEM private key file",
                               "its PEM private key; needs --tls-cert")}},
            {"host", address(REF(run.tls.host), true),
             "the HTTPS listener's address; \"\" = server.host"},
            {"port",
             integer<uint16_t>(0, 65535, REF(run.tls.port)),
             "HTTPS port; 0 picks a free one",
             {valued_flag("--tls-port", "N", "a port from 0 to 65535")}},
            {"min_version",
             choice<std::string>({{"1.2", "1.2"}, {"1.3", "1.3"}}, REF(run.tls.min_version)),
             "the oldest TLS version served: 1.2 or 1.3",
             {valued_flag("--tls-min-version", "V", "1.2 or 1.3")}},
            {"ciphers",
             text(REF(run.tls.ciphers), "an OpenSSL cipher list (\"\" for the default)", true),
             "TLS 1.2's cipher list (OpenSSL syntax); \"\" = forward-secret AEAD only"},
            {"allow_expired",
             boolean(REF(run.tls.allow_expired)),
             "serve a certificate past its expiry (else it is refused)",
             {switch_flag("--tls-allow-expired", true, "")}},
            // Before session_tickets, so that false wins whatever the file's order.
            {"ticket_key_lifetime", ticket_key_lifetime(),
             "seconds between two session ticket key rotations"},
            {"session_tickets", session_tickets(), "session resumption by tickets"},
            {"ticket_key_file",
             text(REF(run.tls.ticket_key_file), "a file path (\"\" for keys of this process)",
                  true),
             "ticket keys shared by replicas (80-byte keys; the first seals)",
             {valued_flag("--tls-ticket-key-file", "FILE", "a file of 80-byte keys")}},
            {"session_cache", integer<size_t>(0, kMaxSessionCache, REF(run.tls.session_cache_size)),
             "server-side session cache entries (TLS 1.2); 0 = none"},
            {"redirect_http",
             boolean(REF(run.tls.redirect_http)),
             "answer plain HTTP with 308 to https:// (not /healthz, /metrics)",
             {switch_flag("--redirect-https", true, "")}},
            {"hsts",
             integer<uint64_t>(0, kMaxHstsSeconds, REF(run.tls.hsts_max_age_s)),
             "Strict-Transport-Security max-age over HTTPS; 0 = none",
             {valued_flag(
                 "--hsts", "S",
                 "whole seconds from 0 to " + std::to_string(kMaxHstsSeconds) + " (two years)")}},
            {"hsts_include_subdomains", boolean(REF(run.tls.hsts_include_subdomains)),
             "adds \"; includeSubDomains\" to it"},
        }};
    s.check = [](const Config& c) -> std::string {
        if (!c.run.tls.certificates.empty()) return {};
        return "the section turns HTTPS on and needs \"certificates\": "
               "[{\"cert\": FILE, \"key\": FILE}]";
    };
    // The section's presence turns HTTPS on (and then needs a certificate): printed only with
    // HTTPS on, so that what --check-config prints reads back as the same configuration.
    s.shown = [](const Config& c) { return !c.run.tls.certificates.empty(); };
    return s;
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
