// The App's TLS wiring on a real socket: what start() refuses, the redirect of plain HTTP (and
// the operations endpoints it leaves alone), certificate reloads that fail or succeed, and what a
// plain request's Request says. Handshakes themselves are the engine's tests (and e2e's).
#include <rivet/rivet.hpp>

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdlib>
#include <stdexcept>
#include <string>

#include "raw_client.hpp"

namespace {

using rivet::test::exchange;  // called qualified where std::exchange would be found too

// A self-signed certificate for localhost, made with the openssl command at test time.
class Certificate {
public:
    Certificate() {
        char dir[] = "/tmp/rivet-tls-XXXXXX";
        if (!mkdtemp(dir)) return;
        dir_ = dir;
        std::string cmd =
            "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes "
            "-days 2 -subj /CN=localhost -addext subjectAltName=DNS:localhost "
            "-keyout " +
            key() + " -out " + cert() + " >/dev/null 2>&1";
        made_ = std::system(cmd.c_str()) == 0;
    }
    ~Certificate() {
        if (!dir_.empty()) std::system(("rm -rf " + dir_).c_str());
    }
    bool made() const { return made_; }
    std::string cert() const { return dir_ + "/cert.pem"; }
    std::string key() const { return dir_ + "/key.pem"; }

private:
    std::string dir_;
    bool made_ = false;
};

// TLS on `c`'s certificate, on any free port.
rivet::RunOptions tls_options(const Certificate& c) {
    rivet::RunOptions o = rivet::test::local_server();
    o.tls.certificates = {{c.cert(), c.key()}};
    o.tls.port = 0;
    return o;
}

void hello(rivet::App& app) {
    app.get("/hello", [](rivet::Request&, rivet::Response& res) { res.text("hi"); });
}

}  // namespace

TEST(AppTls, BadOptionsAreRefusedBeforeAnythingStarts) {
    rivet::App app;
    hello(app);
    auto refused = [&](auto change) {
        rivet::RunOptions o = rivet::test::local_server();
        change(o);
        EXPECT_THROW(app.start(o), std::invalid_argument);
        EXPECT_EQ(app.loops(), 0u);  // not running
    };
    refused([](rivet::RunOptions& o) {
        o.tls.certificates = {{"c.pem", "k.pem"}};
        o.tls.min_version = "1.1";
    });
    refused([](rivet::RunOptions& o) { o.tls.certificates = {{"c.pem", ""}}; });
    refused([](rivet::RunOptions& o) { o.tls_listen_fds = {3}; });      // without certificates
    refused([](rivet::RunOptions& o) { o.tls.redirect_http = true; });  // to nowhere
    refused([](rivet::RunOptions& o) {
        o.tls.certificates = {{"c.pem", "k.pem"}};
        o.tls.host = "10.1.2.3";  // only the plain listener's address
    });
    // The same App then starts without TLS.
    uint16_t port = app.start(rivet::test::local_server());
    EXPECT_EQ(app.tls_port(), 0);
    EXPECT_TRUE(app.tls_listening_fds().empty());
    EXPECT_NE(exchange(port, "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n").find("200 OK"),
              std::string::npos);
    app.stop();
}

TEST(AppTls, AnUnreadableCertificateFailsTheStartNamingIt) {
    rivet::App app;
    hello(app);
    rivet::RunOptions o = rivet::test::local_server();
    o.tls.certificates = {{"/nonexistent/rivet-cert.pem", "/nonexistent/rivet-key.pem"}};
    try {
        app.start(o);
        ADD_FAILURE() << "started";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("/nonexistent/rivet-"), std::string::npos) << e.what();
    }
    EXPECT_EQ(app.loops(), 0u);
}

TEST(AppTls, PlainRequestsAreRedirectedButNotTheOperationsEndpoints) {
    Certificate c;
    if (!c.made()) GTEST_SKIP() << "no openssl command";
    rivet::App app;
    hello(app);
    rivet::RunOptions o = tls_options(c);
    o.tls.redirect_http = true;
    o.tls.hsts_max_age_s = 600;  // never on a plain answer
    o.ops.admin.health = true;
    o.ops.admin.metrics = true;
    uint16_t port = app.start(o);
    const std::string tls_port = std::to_string(app.tls_port());

    std::string r = exchange(port, "GET /hello?a=1 HTTP/1.1\r\nHost: example.com:8080\r\n\r\n");
    EXPECT_EQ(r.rfind("HTTP/1.1 308 Permanent Redirect\r\n", 0), 0u) << r;
    EXPECT_NE(r.find("\r\nLocation: https://example.com:" + tls_port + "/hello?a=1\r\n"),
              std::string::npos)
        << r;
    EXPECT_EQ(r.find("Strict-Transport-Security"), std::string::npos) << r;
    // Any method, any path, routed or not; no usable Host: the listener's address.
    r = exchange(port, "POST /nowhere HTTP/1.0\r\nContent-Length: 0\r\n\r\n", 0);
    EXPECT_NE(r.find("\r\nLocation: https://127.0.0.1:" + tls_port + "/nowhere\r\n"),
              std::string::npos)
        << r;
    // (the parser refuses a Host with "/" or "@"; one it lets through with "!" is not used)
    r = exchange(port, "GET /x HTTP/1.1\r\nHost: ex!ample.com\r\n\r\n");
    EXPECT_NE(r.find("\r\nLocation: https://127.0.0.1:" + tls_port + "/x\r\n"), std::string::npos)
        << r;
    // Load balancers probe over plain HTTP.
    r = exchange(port, "GET /healthz HTTP/1.1\r\nHost: example.com\r\n\r\n");
    EXPECT_EQ(r.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << r;
    r = exchange(port, "GET /metrics HTTP/1.1\r\nHost: example.com\r\n\r\n");
    EXPECT_EQ(r.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << r;
    EXPECT_NE(r.find("rivet_tls_handshakes_total{"), std::string::npos);
    app.stop();
}

TEST(AppTls, AFailedReloadKeepsServingAndSaysWhy) {
    Certificate c;
    if (!c.made()) GTEST_SKIP() << "no openssl command";
    rivet::App app;
    hello(app);
    rivet::RunOptions o = tls_options(c);
    uint16_t port = app.start(o);
    const uint16_t tls_port = app.tls_port();

    rivet::RunOptions bad = o;
    bad.tls.certificates = {{"/nonexistent/rivet-new.pem", c.key()}};
    std::string problems = app.reconfigure(bad);
    EXPECT_NE(problems.find("TLS reload failed, keeping the old certificates: "), std::string::npos)
        << problems;
    EXPECT_NE(problems.find("/nonexistent/rivet-new.pem"), std::string::npos) << problems;
    bad.tls.min_version = "1.0";
    EXPECT_NE(app.reconfigure(bad).find("TLS reload failed"), std::string::npos);

    EXPECT_EQ(app.reconfigure(o), "");  // the good files again
    rivet::RunOptions off = o;          // TLS is not turned off by a reload: nothing to report
    off.tls.certificates.clear();
    EXPECT_EQ(app.reconfigure(off), "");
    EXPECT_EQ(app.tls_port(), tls_port);
    EXPECT_NE(exchange(port, "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n").find("200 OK"),
              std::string::npos);
    app.stop();
}

TEST(AppTls, APlainRequestIsNotSecureInlineOrDetached) {
    rivet::App app;
    auto report = [](rivet::Request& req, rivet::Response& res) {
        res.text(std::string(req.secure() ? "secure" : "plain") + " sni=[" +
                 std::string(req.tls_server_name()) + "]");
    };
    app.get("/inline", report);
    app.get("/offloaded", report).offload();
    app.get("/detached", [](rivet::Request& req, rivet::Response& res) {
        rivet::Request copy = req.detach().detach();
        res.text(std::string(copy.secure() ? "secure" : "plain") + " sni=[" +
                 std::string(copy.tls_server_name()) + "]");
    });
    uint16_t port = app.start(rivet::test::local_server());
    for (const char* path : {"/inline", "/offloaded", "/detached"}) {
        std::string r = rivet::test::exchange(
            port, std::string("GET ") + path + " HTTP/1.1\r\nHost: x\r\n\r\n");
        EXPECT_NE(r.find("\r\n\r\nplain sni=[]"), std::string::npos) << path << r;
    }
    app.stop();
}
