#include "client/conn.hpp"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <cstring>
#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "client/transfer.hpp"

namespace rivet::client {

namespace {

// Idle connections older than this are closed rather than reused: servers close idle ones after
// some time of their own (nginx 75 s, rivet 60 s, Go 90 s), and a request sent just as the
// server closes is lost.
constexpr uint64_t kMaxIdleMs = 30'000;
constexpr size_t kMaxIdlePerOrigin = 32;

struct Pool {
    std::unordered_map<std::string, std::vector<std::unique_ptr<Conn>>> idle;
    PoolStats stats;
};
thread_local Pool t_pool;

std::string openssl_error(const char* what) {
    const unsigned long e = ERR_get_error();
    ERR_clear_error();
    if (!e) return what;
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    return std::string(what) + ": " + buf;
}

// One client SSL_CTX per trust setting, shared by every loop (OpenSSL's contexts are
// thread-safe once set up).
SSL_CTX* client_ctx(const Options& o, std::string& error) {
    struct Free {
        void operator()(SSL_CTX* c) const { SSL_CTX_free(c); }
    };
    static std::mutex mu;
    static std::map<std::pair<bool, std::string>, std::unique_ptr<SSL_CTX, Free>> ctxs;
    std::lock_guard lock(mu);
    auto& slot = ctxs[{o.verify_peer, o.ca_file}];
    if (slot) return slot.get();
    SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
    if (!ctx) {
        error = openssl_error("SSL_CTX_new");
        return nullptr;
    }
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    if (o.verify_peer) {
        const bool ok = o.ca_file.empty()
                            ? SSL_CTX_set_default_verify_paths(ctx) == 1
                            : SSL_CTX_load_verify_locations(ctx, o.ca_file.c_str(), nullptr) == 1;
        if (!ok) {
            error = openssl_error(("cannot load CA file " + o.ca_file).c_str());
            SSL_CTX_free(ctx);
            return nullptr;
        }
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
    } else {
        SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
    }
    static const unsigned char alpn[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
    SSL_CTX_set_alpn_protos(ctx, alpn, sizeof alpn);
    slot.reset(ctx);
    return ctx;
}

}  // namespace

Conn::~Conn() {
    if (ssl) SSL_free(ssl);
    if (fd >= 0) ::close(fd);
}

Io Conn::connect(const sockaddr_storage& addr, socklen_t len) {
    fd = ::socket(addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        error = std::string("socket: ") + std::strerror(errno);
        return Io::Failed;
    }
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), len) == 0) return Io::Done;
    if (errno == EINPROGRESS) return Io::WantWrite;
    error = std::strerror(errno);
    return Io::Failed;
}

Io Conn::finish_connect() {
    int err = 0;
    socklen_t len = sizeof err;
    if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
    if (err == 0) return Io::Done;
    error = std::strerror(err);
    return Io::Failed;
}

bool Conn::start_tls(const std::string& host, const Options& options) {
    SSL_CTX* ctx = client_ctx(options, error);
    if (!ctx) return false;
    ssl = SSL_new(ctx);
    if (!ssl || SSL_set_fd(ssl, fd) != 1) {
        error = openssl_error("SSL_new");
        return false;
    }
    in6_addr a6;
    in_addr a4;
    const bool ip =
        inet_pton(AF_INET, host.c_str(), &a4) == 1 || inet_pton(AF_INET6, host.c_str(), &a6) == 1;
    if (!ip) SSL_set_tlsext_host_name(ssl, host.c_str());  // SNI carries names only (RFC 6066)
    if (options.verify_peer) {
        X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
        X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
        const int ok = ip ? X509_VERIFY_PARAM_set1_ip_asc(param, host.c_str())
                          : X509_VERIFY_PARAM_set1_host(param, host.c_str(), host.size());
        if (ok != 1) {
            error = "cannot check the certificate against " + host;
            return false;
        }
    }
    SSL_set_connect_state(ssl);
    return true;
}

namespace {

Io ssl_result(SSL* ssl, int rc, std::string& error) {
    switch (SSL_get_error(ssl, rc)) {
        case SSL_ERROR_WANT_READ:
            return Io::WantRead;
        case SSL_ERROR_WANT_WRITE:
            return Io::WantWrite;
        case SSL_ERROR_ZERO_RETURN:
            return Io::Eof;
        case SSL_ERROR_SYSCALL:
            if (errno == 0 || errno == ECONNRESET || errno == EPIPE) {
                ERR_clear_error();
                return Io::Eof;
            }
            error = std::strerror(errno);
            ERR_clear_error();
            return Io::Failed;
        default: {
            const long v = SSL_get_verify_result(ssl);
            if (v != X509_V_OK)
                error =
                    std::string("certificate verify failed: ") + X509_verify_cert_error_string(v);
            else
                error = openssl_error("TLS");
            return Io::Failed;
        }
    }
}

}  // namespace

Io Conn::handshake() {
    ERR_clear_error();
    const int rc = SSL_do_handshake(ssl);
    return rc == 1 ? Io::Done : ssl_result(ssl, rc, error);
}

Io Conn::write(std::string_view data, size_t& n) {
    n = 0;
    if (ssl) {
        ERR_clear_error();
        const int rc = SSL_write_ex(ssl, data.data(), data.size(), &n) == 1 ? 1 : 0;
        return rc == 1 ? Io::Done : ssl_result(ssl, rc, error);
    }
    const ssize_t w = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (w >= 0) {
        n = size_t(w);
        return Io::Done;
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK) return Io::WantWrite;
    if (errno == EPIPE || errno == ECONNRESET) return Io::Eof;
    error = std::strerror(errno);
    return Io::Failed;
}

Io Conn::read(char* buf, size_t room, size_t& n) {
    n = 0;
    if (ssl) {
        ERR_clear_error();
        const int rc = SSL_read_ex(ssl, buf, room, &n) == 1 ? 1 : 0;
        return rc == 1 ? Io::Done : ssl_result(ssl, rc, error);
    }
    const ssize_t r = ::recv(fd, buf, room, 0);
    if (r > 0) {
        n = size_t(r);
        return Io::Done;
    }
    if (r == 0) return Io::Eof;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return Io::WantRead;
    if (errno == ECONNRESET) return Io::Eof;
    error = std::strerror(errno);
    return Io::Failed;
}

bool Conn::still_usable() {
    char c;
    const ssize_t r = ::recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
    if (r < 0) return errno == EAGAIN || errno == EWOULDBLOCK;
    if (r == 0 || !ssl) return false;  // closed, or bytes nobody asked for
    // TLS: records may be a session ticket or a close_notify; only plaintext or EOF spoil it.
    char b;
    size_t n = 0;
    return read(&b, 1, n) == Io::WantRead;
}

std::unique_ptr<Conn> take_idle(const std::string& origin, uint64_t now_ms) {
    auto it = t_pool.idle.find(origin);
    if (it == t_pool.idle.end()) return nullptr;
    auto& list = it->second;
    while (!list.empty()) {
        std::unique_ptr<Conn> c = std::move(list.back());  // the most recent: the least likely
        list.pop_back();                                   // to have been closed by the server
        --t_pool.stats.idle;
        if (now_ms - c->idle_since_ms <= kMaxIdleMs && c->still_usable()) {
            c->reused = true;
            ++t_pool.stats.reused;
            return c;
        }
    }
    return nullptr;
}

void give_back(std::unique_ptr<Conn> conn, uint64_t now_ms) {
    auto& list = t_pool.idle[conn->origin];
    if (list.size() >= kMaxIdlePerOrigin) return;  // closed by its destructor
    conn->idle_since_ms = now_ms;
    list.push_back(std::move(conn));
    ++t_pool.stats.idle;
}

void count_opened() {
    ++t_pool.stats.opened;
}

PoolStats pool_stats() {
    return t_pool.stats;
}

}  // namespace rivet::client
