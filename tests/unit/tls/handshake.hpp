// A real TLS handshake in memory for the tls tests: an OpenSSL client (TLS_client_method) and a
// server SSL started on Context::default_ctx(), as the engine starts one, joined by a BIO pair
// and pumped until both finish or one fails.
#pragma once

#include <openssl/ssl.h>

#include <memory>
#include <string>
#include <vector>

#include "tls/context.hpp"

namespace rivet::tls::testing {

struct SessionFree {
    void operator()(SSL_SESSION* s) const { SSL_SESSION_free(s); }
};
using SessionPtr = std::unique_ptr<SSL_SESSION, SessionFree>;

struct Client {
    std::string sni;      // empty: the client sends none
    int min_version = 0;  // 0: OpenSSL's default
    int max_version = 0;
    std::vector<std::string> alpn;  // empty: no ALPN offered
    std::string ciphers;            // TLS 1.2 list; empty: OpenSSL's default
    std::string groups;             // key exchange groups; empty: OpenSSL's default
    SSL_SESSION* resume = nullptr;  // a session of an earlier handshake to resume
    bool verify = true;             // verify the chain against the test CA (and the SNI name)
    bool renegotiate = false;       // TLS 1.2: ask for a second handshake once done
};

struct Handshake {
    bool ok = false;
    std::string client_error;  // OpenSSL's reason on the side that failed, if one did
    std::string server_error;
    std::string peer_cn;  // the server certificate's CN, as the client got it
    std::string alpn;     // what the server chose
    std::string version;  // "TLSv1.2", "TLSv1.3"
    std::string cipher;
    bool reused = false;        // SSL_session_reused on the server
    SessionPtr session;         // the client's session, with any ticket the server sent
    bool has_ticket = false;    // that session carries a ticket (vs a session id only)
    int sessions_sent = 0;      // sessions the client was given (TLS 1.3: one per ticket)
    bool renegotiated = false;  // Client::renegotiate: the second handshake went through
};

Handshake handshake(const Context& context, const Client& client = {});

}  // namespace rivet::tls::testing
