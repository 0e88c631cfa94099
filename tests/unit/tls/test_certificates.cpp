#include "test_certificates.hpp"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <vector>

namespace rivet::tls::testing {

namespace {

constexpr long kDay = 24 * 3600;

struct Key {
    std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> p{EVP_EC_gen("P-256"), EVP_PKEY_free};
};

struct Cert {
    std::unique_ptr<X509, decltype(&X509_free)> p{X509_new(), X509_free};
};

void add_ext(X509* x, X509* issuer, int nid, const char* value) {
    X509V3_CTX v3;
    X509V3_set_ctx(&v3, issuer, x, nullptr, nullptr, 0);
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &v3, nid, value);
    if (!ext || X509_add_ext(x, ext, -1) != 1) throw std::runtime_error("test cert: extension");
    X509_EXTENSION_free(ext);
}

// A certificate for `key` named `cn`, signed by `issuer` (self-signed when null), valid from
// now + not_before_s to now + not_after_s.
Cert make(const Key& key, const char* cn, const Cert* issuer, const Key* issuer_key, bool ca,
          const char* san, long not_before_s = -kDay, long not_after_s = 365 * kDay) {
    static long serial = 1;
    Cert c;
    X509* x = c.p.get();
    X509_set_version(x, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(x), serial++);
    X509_gmtime_adj(X509_getm_notBefore(x), not_before_s);
    X509_gmtime_adj(X509_getm_notAfter(x), not_after_s);
    X509_set_pubkey(x, key.p.get());
    X509_NAME* name = X509_get_subject_name(x);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn),
                               -1, -1, 0);
    X509* signer = issuer ? issuer->p.get() : x;
    X509_set_issuer_name(x, X509_get_subject_name(signer));
    add_ext(x, signer, NID_subject_key_identifier, "hash");
    add_ext(x, signer, NID_authority_key_identifier, "keyid:always");
    if (ca) {
        add_ext(x, signer, NID_basic_constraints, "critical,CA:TRUE");
        add_ext(x, signer, NID_key_usage, "critical,keyCertSign,cRLSign");
    } else {
        add_ext(x, signer, NID_basic_constraints, "CA:FALSE");
        add_ext(x, signer, NID_ext_key_usage, "serverAuth");
        if (san) add_ext(x, signer, NID_subject_alt_name, san);
    }
    EVP_PKEY* signing_key = issuer_key ? issuer_key->p.get() : key.p.get();
    if (X509_sign(x, signing_key, EVP_sha256()) == 0) throw std::runtime_error("test cert: sign");
    return c;
}

void write_certs(const std::string& path, std::vector<const Cert*> certs) {
    std::FILE* f = std::fopen(path.c_str(), "w");
    if (!f) throw std::runtime_error("test cert: cannot write " + path);
    for (const Cert* c : certs) PEM_write_X509(f, c->p.get());
    std::fclose(f);
}

void write_key(const std::string& path, const Key& k) {
    std::FILE* f = std::fopen(path.c_str(), "w");
    if (!f) throw std::runtime_error("test cert: cannot write " + path);
    PEM_write_PrivateKey(f, k.p.get(), nullptr, nullptr, 0, nullptr, nullptr);
    std::fclose(f);
}

void make_all(TestCertificates& t);

struct Folder {
    TestCertificates certs;
    Folder() { make_all(certs); }
    Folder(const Folder&) = delete;
    ~Folder() {
        std::error_code ec;
        if (!certs.dir.empty()) std::filesystem::remove_all(certs.dir, ec);
    }
};

void make_all(TestCertificates& t) {
    char tmpl[] = "/tmp/rivet-tls-test-XXXXXX";
    if (!mkdtemp(tmpl)) throw std::runtime_error("test cert: mkdtemp");
    t.dir = tmpl;
    auto at = [&](const char* name) { return t.dir + "/" + name; };

    Key ca_key, mid_key, local_key, other_key, api_key, old_key, later_key, cn_key, stray_key;
    Cert ca = make(ca_key, "rivet test root", nullptr, nullptr, true, nullptr, -kDay, 30 * kDay);
    Cert mid = make(mid_key, "rivet test intermediate", &ca, &ca_key, true, nullptr);
    Cert local = make(local_key, "localhost", &mid, &mid_key, false, "DNS:localhost,IP:127.0.0.1");
    Cert other =
        make(other_key, "other.test", &mid, &mid_key, false, "DNS:other.test,DNS:*.wild.test");
    Cert api = make(api_key, "api.wild.test", &mid, &mid_key, false, "DNS:api.wild.test");
    Cert old = make(old_key, "expired.test", &mid, &mid_key, false, "DNS:expired.test", -10 * kDay,
                    -2 * kDay);
    Cert later =
        make(later_key, "later.test", &mid, &mid_key, false, "DNS:later.test", 2 * kDay, 30 * kDay);
    Cert cn = make(cn_key, "cn.test", &mid, &mid_key, false, nullptr);

    t.ca_file = at("ca.pem");
    write_certs(t.ca_file, {&ca});
    auto pair = [&](const char* name, std::vector<const Cert*> chain, const Key& key) {
        CertificateFiles f{at(name) + ".pem", at(name) + ".key"};
        write_certs(f.cert_file, std::move(chain));
        write_key(f.key_file, key);
        return f;
    };
    t.localhost = pair("localhost", {&local, &mid}, local_key);
    t.other = pair("other", {&other, &mid}, other_key);
    t.api_wild = pair("api_wild", {&api, &mid}, api_key);
    t.expired = pair("expired", {&old, &mid}, old_key);
    t.not_yet = pair("later", {&later, &mid}, later_key);
    t.mismatched = pair("mismatched", {&local, &mid}, stray_key);
    t.out_of_order = pair("out_of_order", {&mid, &local}, local_key);
    t.cn_only = pair("cn_only", {&cn, &mid}, cn_key);
    t.not_pem = at("not_pem.txt");
    std::FILE* f = std::fopen(t.not_pem.c_str(), "w");
    std::fputs("this is not a certificate\n", f);
    std::fclose(f);
    t.missing = at("missing.pem");
}

}  // namespace

const TestCertificates& test_certificates() {
    static Folder folder;
    return folder.certs;
}

}  // namespace rivet::tls::testing
