// What the engine's TLS tests share: a self-signed certificate for localhost made at test time
// with the openssl command line, a ServerConfig serving it, and a client over a BIO pair whose
// ciphertext the test sends in the writes it chooses.
#pragma once

#include <gtest/gtest.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "engine_harness.hpp"
#include "tls/context.hpp"

namespace rivet::engine::testing {

// A self-signed certificate for localhost, made once for the suite.
class EngineTls : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        dir_ = std::filesystem::temp_directory_path() /
               ("rivet-engine-tls-" + std::to_string(getpid()));
        std::filesystem::create_directories(dir_);
        const std::string cmd =
            "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout '" +
            (dir_ / "key.pem").string() + "' -out '" + (dir_ / "cert.pem").string() +
            "' -subj /CN=localhost -days 2 >/dev/null 2>&1";
        ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    }
    static void TearDownTestSuite() { std::filesystem::remove_all(dir_); }

    static ServerConfig config() {
        tls::Settings s;
        s.certificates.push_back({(dir_ / "cert.pem").string(), (dir_ / "key.pem").string()});
        ServerConfig c;
        c.tls = tls::Context::load(s);
        return c;
    }

    static std::filesystem::path dir_;
};
inline std::filesystem::path EngineTls::dir_;

// An OpenSSL client over a BIO pair on a harness connection: its records leave in the writes
// the test makes of them.
struct MemClient {
    explicit MemClient(Client& r) : raw(r) {
        BIO_new_bio_pair(&inner, 0, &net, 0);
        SSL_set_bio(ssl, inner, inner);
        SSL_set_connect_state(ssl);
    }
    ~MemClient() {
        SSL_free(ssl);
        BIO_free(net);
        SSL_CTX_free(ctx);
    }
    std::string take() {  // the ciphertext the client made so far
        std::string s;
        char buf[16384];
        for (int n; (n = BIO_read(net, buf, sizeof buf)) > 0;) s.append(buf, size_t(n));
        return s;
    }
    void feed(Millis window) {  // what the server sent within `window`, into the client
        std::string got = raw.read_for(window);
        raw.clear();
        if (!got.empty()) BIO_write(net, got.data(), int(got.size()));
    }
    bool handshake(size_t piece = 0) {
        for (int i = 0; i < 200; ++i) {
            int hs = SSL_do_handshake(ssl);
            std::string out = take();
            if (!out.empty()) piece ? raw.send_in_pieces(out, piece, 0ms) : raw.send(out);
            if (hs == 1) return true;
            feed(20ms);
        }
        return false;
    }
    std::string cipher_of(std::string_view plain) {
        SSL_write(ssl, plain.data(), int(plain.size()));
        return take();
    }
    std::string plain_for(Millis window) {
        feed(window);
        std::string s;
        char buf[16384];
        for (int n; (n = SSL_read(ssl, buf, sizeof buf)) > 0;) s.append(buf, size_t(n));
        ERR_clear_error();
        return s;
    }

    SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
    SSL* ssl = SSL_new(ctx);
    BIO* inner = nullptr;
    BIO* net = nullptr;
    Client& raw;
};

}  // namespace rivet::engine::testing
