// tls::Settings: what a TLS listener serves, as the layers above give it (App converts the public
// rivet::TlsOptions into it). Plain data: tls::Context::load() checks it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace rivet::tls {

enum class Version : uint8_t { Tls12, Tls13 };

struct CertificateFiles {
    std::string cert_file;  // PEM: the server's certificate first, then its intermediates
    std::string key_file;   // PEM: its private key
};

struct Settings {
    // The first is the default: for clients that send no SNI name, or one no certificate names.
    // The others are chosen by SNI, by the DNS names (and wildcards) their certificates carry.
    std::vector<CertificateFiles> certificates;
    Version min_version = Version::Tls12;  // the protocol floor; TLS 1.0 and 1.1 are never served
    // TLS 1.2's cipher list (OpenSSL syntax); empty: forward-secret AEAD suites only. TLS 1.3's
    // suites are all AEAD and forward secret and stay OpenSSL's.
    std::string ciphers;
    bool allow_expired = false;  // serve a certificate past its notAfter (else load() refuses it)
    // Session resumption. Tickets: encrypted with keys shared by every loop, replaced every
    // lifetime (a ticket stays valid for two lifetimes); 0: no tickets. The server-side cache
    // (TLS 1.2 session ids): entries, shared by every loop; 0: none.
    uint64_t ticket_key_lifetime_s = 3600;
    size_t session_cache_size = 20'000;
    // A ticket key file (tls/ticket_keys.hpp: 80-byte keys, the first sealing): tickets resume on
    // every process that reads the same file; read again at every load (a reload). Empty: keys
    // made and rotated by this process.
    std::string ticket_key_file;
    // ALPN, in the server's order of preference (app::tls_settings puts "h2" first when HTTP/2
    // is on).
    std::vector<std::string> alpn{"http/1.1"};
};

}  // namespace rivet::tls
