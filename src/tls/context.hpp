// tls::Context: the certificates and protocol settings of a TLS listener, loaded once and shared
// (read-only) by every loop; a reload builds a new one and new handshakes use it, while
// connections already open keep theirs. The tls layer knows OpenSSL and nothing of sockets or
// HTTP: the engine moves the bytes (tls::Session).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tls/settings.hpp"

struct ssl_ctx_st;  // OpenSSL's SSL_CTX

namespace rivet::tls {

class TicketKeys;

class Context {
public:
    // Loads and checks every certificate of `settings` (one SSL_CTX each, with the modern
    // profile: TLS 1.2+, forward-secret AEAD suites, no renegotiation, no compression, ALPN,
    // session tickets and cache); throws std::runtime_error with a message that names the file
    // and says what is wrong (unreadable, key does not match, chain out of order, expired unless
    // allow_expired). `keys`: the ticket keys to share with the context this one replaces, so
    // tickets issued before a reload still resume; null: a fresh set. With a ticket key file
    // the keys are the file's, read again now (a reload picks up a rotated file).
    static std::shared_ptr<const Context> load(const Settings& settings,
                                               std::shared_ptr<TicketKeys> keys = nullptr);
    ~Context();
    Context(const Context&) = delete;
    Context& operator=(const Context&) = delete;

    // Where a new connection's handshake starts; the SNI callback moves it to the certificate
    // that names the host it asks for.
    ssl_ctx_st* default_ctx() const;
    const std::shared_ptr<TicketKeys>& ticket_keys() const;
    const Settings& settings() const;
    // One line per certificate, for the startup log: "cert.pem: localhost, *.example.com (expires
    // 2027-11-23)".
    std::vector<std::string> describe() const;
    // Each certificate's file and the end of its validity (notAfter, seconds since the Unix
    // epoch), in the order of the settings: what the metrics show of them.
    struct Expiry {
        std::string cert_file;
        int64_t not_after_s = 0;
    };
    std::vector<Expiry> expiries() const;

private:
    Context();
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// What `--check-config` says of the settings' files: one line per problem, none when all is
// well. Never throws.
std::vector<std::string> check(const Settings& settings);

}  // namespace rivet::tls
