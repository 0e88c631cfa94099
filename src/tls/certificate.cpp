#include "tls/certificate.hpp"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>

namespace rivet::tls {

namespace {

struct BioFree {
    void operator()(BIO* b) const { BIO_free(b); }
};
using BioPtr = std::unique_ptr<BIO, BioFree>;

// The whole file, or nullopt with the reason in `why`.
std::optional<std::string> read_file(const std::string& path, std::string& why) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) {
        why = std::strerror(errno);
        return std::nullopt;
    }
    std::string text;
    char buf[16384];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
    bool failed = std::ferror(f);
    int err = errno;
    std::fclose(f);
    if (failed) {
        why = std::strerror(err);
        return std::nullopt;
    }
    return text;
}

// After a PEM read returned nothing: true when it was the plain end of the input (no further
// "-----BEGIN" line), false when a block was there but broken.
bool pem_at_end() {
    unsigned long e = ERR_peek_last_error();
    bool end =
        e == 0 || (ERR_GET_LIB(e) == ERR_LIB_PEM && ERR_GET_REASON(e) == PEM_R_NO_START_LINE);
    ERR_clear_error();
    return end;
}

// Never asks for a pass phrase (the default would prompt on the terminal): an encrypted key is
// refused.
int no_password(char*, int, int, void*) {
    return -1;
}

std::string name_text(const X509_NAME* name) {
    BioPtr out(BIO_new(BIO_s_mem()));
    X509_NAME_print_ex(out.get(), name, 0, XN_FLAG_RFC2253);
    char* data = nullptr;
    long n = BIO_get_mem_data(out.get(), &data);
    return n > 0 ? std::string(data, size_t(n)) : std::string("(empty name)");
}

std::string date_text(const ASN1_TIME* t) {
    std::tm tm{};
    if (ASN1_TIME_to_tm(t, &tm) != 1) return "an unreadable date";
    char buf[40];
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02d", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday);
    return buf;
}

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out)
        if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
    return out;
}

// Dates: each certificate of the chain, not only the server's own (an expired intermediate
// fails the clients' verification as surely).
void check_dates(const Certificate& c, bool allow_expired, std::vector<std::string>& problems) {
    if (allow_expired) return;
    for (size_t i = 0; i < c.chain.size(); ++i) {
        X509* x = c.chain[i].get();
        std::string which = i == 0 ? std::string("the certificate")
                                   : "certificate " + std::to_string(i + 1) + " of the chain (" +
                                         name_text(X509_get_subject_name(x)) + ")";
        const char* force = " (to serve it anyway: tls.allow_expired / --tls-allow-expired)";
        if (X509_cmp_current_time(X509_get0_notAfter(x)) < 0)
            problems.push_back(c.cert_file + ": " + which + " expired on " +
                               date_text(X509_get0_notAfter(x)) + force);
        else if (X509_cmp_current_time(X509_get0_notBefore(x)) > 0)
            problems.push_back(c.cert_file + ": " + which + " is not valid before " +
                               date_text(X509_get0_notBefore(x)) + force);
    }
}

}  // namespace

std::vector<std::string> dns_names(X509* cert) {
    std::vector<std::string> names;
    auto* sans =
        static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
    if (sans) {
        for (int i = 0; i < sk_GENERAL_NAME_num(sans); ++i) {
            const GENERAL_NAME* n = sk_GENERAL_NAME_value(sans, i);
            if (n->type != GEN_DNS) continue;
            const ASN1_IA5STRING* s = n->d.dNSName;
            names.push_back(lower({reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                                   size_t(ASN1_STRING_length(s))}));
        }
        GENERAL_NAMES_free(sans);
        return names;
    }
    X509_NAME* subject = X509_get_subject_name(cert);
    int i = X509_NAME_get_index_by_NID(subject, NID_commonName, -1);
    if (i >= 0) {
        const ASN1_STRING* s = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, i));
        names.push_back(lower({reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                               size_t(ASN1_STRING_length(s))}));
    }
    return names;
}

bool name_matches(std::string_view pattern, std::string_view host) {
    auto equal = [](std::string_view a, std::string_view b) {
        if (a.size() != b.size()) return false;
        for (size_t i = 0; i < a.size(); ++i) {
            char x = a[i], y = b[i];
            if (x >= 'A' && x <= 'Z') x = char(x - 'A' + 'a');
            if (y >= 'A' && y <= 'Z') y = char(y - 'A' + 'a');
            if (x != y) return false;
        }
        return true;
    };
    if (pattern.starts_with("*.")) {
        // "*.example.com" covers "a.example.com", not "example.com" nor "a.b.example.com".
        size_t dot = host.find('.');
        if (dot == 0 || dot == std::string_view::npos) return false;
        return equal(pattern.substr(1), host.substr(dot));
    }
    return equal(pattern, host);
}

std::optional<Certificate> read_certificate(const CertificateFiles& files, bool allow_expired,
                                            std::vector<std::string>& problems) {
    ERR_clear_error();
    Certificate c;
    c.cert_file = files.cert_file;
    const std::string& cf = files.cert_file;
    const std::string& kf = files.key_file;
    std::string why;
    auto cert_pem = read_file(cf, why);
    if (!cert_pem) {
        problems.push_back(cf + ": cannot read the certificate file: " + why);
        return std::nullopt;
    }
    auto key_pem = read_file(kf, why);
    if (!key_pem) {
        problems.push_back(kf + ": cannot read the key file: " + why);
        return std::nullopt;
    }

    BioPtr in(BIO_new_mem_buf(cert_pem->data(), int(cert_pem->size())));
    while (X509* x = PEM_read_bio_X509(in.get(), nullptr, no_password, nullptr))
        c.chain.emplace_back(x);
    if (!pem_at_end()) {
        problems.push_back(cf + ": a PEM block in it is not a certificate OpenSSL can read");
        return std::nullopt;
    }
    if (c.chain.empty()) {
        problems.push_back(cf + ": no PEM certificate in it (\"-----BEGIN CERTIFICATE-----\")");
        return std::nullopt;
    }
    BioPtr key_in(BIO_new_mem_buf(key_pem->data(), int(key_pem->size())));
    c.key.reset(PEM_read_bio_PrivateKey(key_in.get(), nullptr, no_password, nullptr));
    ERR_clear_error();
    if (!c.key) {
        problems.push_back(kf +
                           ": no PEM private key in it (or it is encrypted: rivet asks for "
                           "no pass phrase)");
        return std::nullopt;
    }

    size_t before = problems.size();
    for (size_t i = 0; i + 1 < c.chain.size(); ++i) {
        X509* subject = c.chain[i].get();
        X509* issuer = c.chain[i + 1].get();
        if (X509_check_issued(issuer, subject) == X509_V_OK) continue;
        problems.push_back(cf + ": chain out of order: certificate " + std::to_string(i + 1) +
                           " (" + name_text(X509_get_subject_name(subject)) +
                           ") is not issued by certificate " + std::to_string(i + 2) + " (" +
                           name_text(X509_get_subject_name(issuer)) +
                           "); put the server's certificate first, then each one's issuer");
        break;
    }
    // Out of order, the first certificate is likely not the server's: the order is the problem
    // to fix, not the key.
    if (problems.size() == before && X509_check_private_key(c.chain[0].get(), c.key.get()) != 1)
        problems.push_back(kf + ": the key does not match the certificate in " + cf);
    ERR_clear_error();
    check_dates(c, allow_expired, problems);
    if (problems.size() != before) return std::nullopt;

    c.names = dns_names(c.chain[0].get());
    const ASN1_TIME* not_after = X509_get0_notAfter(c.chain[0].get());
    c.expires = date_text(not_after);
    std::tm tm{};
    if (ASN1_TIME_to_tm(not_after, &tm) == 1) c.not_after_s = int64_t(timegm(&tm));
    return c;
}

}  // namespace rivet::tls
