// tls::Certificate: one certificate/key pair read from its PEM files and checked the way
// `--check-config` and Context::load() need: the files are readable PEM, the key matches the
// certificate, the chain is in order (each certificate issued by the next), the dates are
// current. Also the DNS names the certificate serves, for SNI.
#pragma once

#include <openssl/evp.h>
#include <openssl/x509.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tls/settings.hpp"

namespace rivet::tls {

struct X509Free {
    void operator()(X509* x) const { X509_free(x); }
};
struct PkeyFree {
    void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using X509Ptr = std::unique_ptr<X509, X509Free>;
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyFree>;

struct Certificate {
    std::string cert_file;
    std::vector<X509Ptr> chain;  // [0] the server's own, then its issuers in order
    PkeyPtr key;
    std::vector<std::string> names;  // lower-case DNS names, maybe "*.example.com"
    std::string expires;             // the leaf's notAfter, "YYYY-MM-DD"
    int64_t not_after_s = 0;         // the same, in seconds since the Unix epoch
};

// Reads and checks one pair. Each problem found is appended to `problems` as one line that names
// the file and says what to do; nullopt when the pair cannot be served (a problem that
// `allow_expired` forgives, expired or not yet valid, is no problem then).
std::optional<Certificate> read_certificate(const CertificateFiles& files, bool allow_expired,
                                            std::vector<std::string>& problems);

// The DNS names a certificate serves: its subjectAltName DNS entries, or its subject's CN when it
// has no subjectAltName at all; lower case.
std::vector<std::string> dns_names(X509* cert);

// Whether a certificate name ("host.example.com" or "*.example.com") covers `host`: exact and
// case-insensitive; a wildcard stands for exactly one leftmost label.
bool name_matches(std::string_view pattern, std::string_view host);

}  // namespace rivet::tls
