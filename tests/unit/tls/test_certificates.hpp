// Certificates for the tls tests, made at run time with OpenSSL's X509 API (EC P-256 keys: fast)
// in a temporary folder removed when the test program exits; nothing is committed.
#pragma once

#include <string>

#include "tls/settings.hpp"

namespace rivet::tls::testing {

struct TestCertificates {
    std::string dir;
    std::string ca_file;          // the root CA: what clients trust
    CertificateFiles localhost;   // "localhost" + IP 127.0.0.1, signed by the intermediate; chain
    CertificateFiles other;       // "other.test" + "*.wild.test", signed by the intermediate; chain
    CertificateFiles api_wild;    // "api.wild.test", a name "other" covers by its wildcard
    CertificateFiles expired;     // "expired.test", notAfter two days ago
    CertificateFiles not_yet;     // "later.test", notBefore in two days
    CertificateFiles mismatched;  // localhost's certificate with another key
    CertificateFiles out_of_order;  // localhost's chain, the intermediate first
    CertificateFiles cn_only;       // no subjectAltName, CN "cn.test"
    std::string not_pem;            // a file of text that is no PEM
    std::string missing;            // a path that does not exist
};

// Made once per test program.
const TestCertificates& test_certificates();

}  // namespace rivet::tls::testing
