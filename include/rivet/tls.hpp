// rivet::TlsOptions: HTTPS on a second listener beside the plain one (RunOptions::tls).
//
//   rivet::RunOptions options;
//   options.tls.certificates = {{"cert.pem", "key.pem"}};  // the full chain in cert.pem
//   options.tls.port = 8443;
//   options.tls.redirect_http = true;     // plain requests answered 308 to https://...
//   app.run(options);                     // SIGHUP re-reads the certificate files
//
// A handler sees whether its request came over TLS with Request::secure() and the name the
// client asked for with Request::tls_server_name().
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace rivet {

struct TlsCertificate {
    std::string cert_file{};  // PEM: the certificate, then its intermediates (the full chain)
    std::string key_file{};   // PEM: its private key
};

struct TlsOptions {
    // Empty: no TLS listener. The first is the default (clients without SNI, or naming a host no
    // certificate names); the others are chosen by SNI, by the names their certificates carry.
    std::vector<TlsCertificate> certificates{};
    std::string host{};               // empty: the plain listener's host
    uint16_t port = 8443;             // 0: any free port (tests); App::tls_port() says which
    std::string min_version = "1.2";  // "1.2" or "1.3"; TLS 1.0 and 1.1 are never served
    std::string ciphers{};            // TLS 1.2's list (OpenSSL syntax); empty: the modern default
    bool allow_expired = false;       // else an expired certificate refuses to load
    uint32_t ticket_key_lifetime_s = 3600;  // session ticket keys' rotation; 0: no tickets
    size_t session_cache_size = 20'000;     // server-side session cache entries; 0: none
    // Session ticket keys shared by every replica that reads this file, so a session made on one
    // resumes on another and across an upgrade (nginx's ssl_session_ticket_key): 80 random bytes
    // per key, 1 to 64 keys back to back; the first seals new tickets, all of them open tickets.
    // Read at start and at every reload (SIGHUP): rotate by writing a new key first and keeping
    // the old ones after it. Empty: keys made by this process, rotated every
    // ticket_key_lifetime_s.
    std::string ticket_key_file{};
    // Plain-HTTP requests are answered 308 to https://<Host's name>[:port]<target>; the
    // operations endpoints on the main port (/healthz, /metrics, /status) are not redirected,
    // since load balancers probe them over plain HTTP.
    bool redirect_http = false;
    // > 0: answers over TLS say "Strict-Transport-Security: max-age=N" (never plain ones).
    uint64_t hsts_max_age_s = 0;
    bool hsts_include_subdomains = false;  // "; includeSubDomains" after it
};

}  // namespace rivet
