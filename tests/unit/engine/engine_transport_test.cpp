// Each transport alone, over a socketpair, with the loop's buffers of an IoThread that does not
// run: plain TCP passes bytes through (vectored writes, file pieces, the FIN); TLS runs its
// handshake against OpenSSL's client, then carries the same calls as records, and ends with
// close_notify.
#include <gtest/gtest.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "engine/io_thread.hpp"
#include "engine/transport.hpp"
#include "engine/transport_tls.hpp"
#include "tls_test_support.hpp"

namespace rivet::engine::testing {
namespace {

struct Pair {
    Pair() { EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds.data()), 0); }
    ~Pair() {
        if (fds[1] >= 0) close(fds[1]);
    }
    int server() {  // handed to a transport, which closes it
        const int fd = fds[0];
        fds[0] = -1;
        return fd;
    }
    int client() const { return fds[1]; }
    std::array<int, 2> fds{-1, -1};
};

bool wait_readable(int fd, int ms = 2000) {
    pollfd p{fd, POLLIN, 0};
    return poll(&p, 1, ms) == 1;
}

std::string read_all(int fd, size_t want) {
    std::string got;
    char buf[65536];
    while (got.size() < want && wait_readable(fd)) {
        const ssize_t n = read(fd, buf, sizeof buf);
        if (n <= 0) break;
        got.append(buf, size_t(n));
    }
    return got;
}

// A file of `size` known bytes, removed with the object.
struct TempFile {
    explicit TempFile(size_t size) {
        char name[] = "/tmp/rivet-transport-XXXXXX";
        fd = mkstemp(name);
        unlink(name);
        for (size_t i = 0; i < size; ++i) bytes.push_back(char('A' + i % 23));
        EXPECT_EQ(write(fd, bytes.data(), bytes.size()), ssize_t(bytes.size()));
    }
    ~TempFile() { close(fd); }
    int fd;
    std::string bytes;
};

class TransportTest : public EngineTls {
protected:
    TestApp app;
    IoThread io{0, config(), app, {}};
};

TEST_F(TransportTest, TcpReadsWritesPiecesInOrderAndCountsBytes) {
    Pair p;
    TcpTransport t(io, p.server());
    std::string_view pieces[] = {"one ", "", "two ", "three"};
    ASSERT_EQ(t.write(pieces, false), 13);
    EXPECT_EQ(read_all(p.client(), 13), "one two three");

    char buf[64];
    errno = 0;
    EXPECT_EQ(t.read(buf, sizeof buf), -1);
    EXPECT_EQ(errno, EAGAIN);
    ASSERT_EQ(write(p.client(), "hello", 5), 5);
    EXPECT_EQ(t.read(buf, sizeof buf), 5);
    EXPECT_EQ(std::string(buf, 5), "hello");
    EXPECT_TRUE(t.drained()) << "it read less than it asked for";
    EXPECT_EQ(io.stats().read().bytes_in, 5u);
    EXPECT_FALSE(t.backlog());
}

TEST_F(TransportTest, TcpSendsFilePiecesAndEndsWithTheFin) {
    Pair p;
    TcpTransport t(io, p.server());
    TempFile f(10000);
    ASSERT_EQ(t.send_file(f.fd, 100, 5000), 5000);
    EXPECT_EQ(read_all(p.client(), 5000), f.bytes.substr(100, 5000));
    t.shutdown_write();
    char c;
    ASSERT_TRUE(wait_readable(p.client()));
    EXPECT_EQ(read(p.client(), &c, 1), 0) << "the FIN";
    ASSERT_EQ(write(p.client(), "x", 1), 1);
    EXPECT_EQ(t.unread_in_socket(), 1u);
    EXPECT_TRUE(t.discard_input());
    EXPECT_EQ(t.unread_in_socket(), 0u);
    close(p.fds[1]);
    p.fds[1] = -1;
    EXPECT_FALSE(t.discard_input()) << "the peer is gone";
}

// OpenSSL's client on the other end, in a thread of its own (blocking socket).
struct OpenSslClient {
    explicit OpenSslClient(int fd) {
        int off = 0;
        ioctl(fd, FIONBIO, &off);  // blocking, bounded by the receive timeout
        ctx = SSL_CTX_new(TLS_client_method());
        ssl = SSL_new(ctx);
        SSL_set_fd(ssl, fd);
        timeval tv{10, 0};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    }
    ~OpenSslClient() {
        SSL_free(ssl);
        SSL_CTX_free(ctx);
    }
    std::string read_exactly(size_t n) {
        std::string s;
        char buf[16384];
        while (s.size() < n) {
            const int got = SSL_read(ssl, buf, sizeof buf);
            if (got <= 0) break;
            s.append(buf, size_t(got));
        }
        return s;
    }
    SSL_CTX* ctx;
    SSL* ssl;
};

// Drives the transport's handshake until it ends, as the loop would on readable events.
TlsTransport::Step handshake(TlsTransport& t) {
    for (int i = 0; i < 200; ++i) {  // up to 10 s
        const auto step = t.handshake();
        if (step != TlsTransport::Step::More) return step;
        wait_readable(t.fd(), 50);
    }
    return TlsTransport::Step::More;
}

TEST_F(TransportTest, TlsHandshakeThenRecordsBothWaysFilesAndCloseNotify) {
    Pair p;
    TlsTransport t(io, p.server(), config().tls);
    OpenSslClient client(p.client());
    std::thread peer([&] {
        ASSERT_EQ(SSL_connect(client.ssl), 1);
        ASSERT_EQ(SSL_write(client.ssl, "ping", 4), 4);
    });
    ASSERT_EQ(handshake(t), TlsTransport::Step::Done);
    peer.join();
    EXPECT_TRUE(t.tls_facts().secure);
    EXPECT_EQ(io.stats().read().tls_handshakes.full_tls13, 1u);

    char buf[IoThread::kReadBufferSize];
    std::string got;
    for (int i = 0; i < 200 && got.size() < 4; ++i) {
        const ssize_t n = t.read(buf, sizeof buf);
        if (n > 0) got.append(buf, size_t(n));
        if (n < 0 && errno != EAGAIN) break;
        if (got.size() < 4) wait_readable(t.fd(), 50);
    }
    EXPECT_EQ(got, "ping");

    std::string_view pieces[] = {"vec", "tored"};
    ASSERT_EQ(t.write(pieces, false), 8);
    EXPECT_EQ(client.read_exactly(8), "vectored");

    TempFile f(100000);  // more than one piece: the transport sends at most one per call
    std::string file_got;
    std::thread reader([&] { file_got = client.read_exactly(100000); });
    uint64_t at = 0;
    // Bounded by a deadline, not a count: the reader thread may be slow on a busy machine.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (at < f.bytes.size() && std::chrono::steady_clock::now() < deadline) {
        const ssize_t n = t.send_file(f.fd, at, f.bytes.size() - at);
        if (n > 0) {
            EXPECT_LE(size_t(n), t.file_piece());
            at += uint64_t(n);
        } else {
            ASSERT_EQ(errno, EAGAIN);
            t.flush_backlog();
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    }
    while (t.backlog() && std::chrono::steady_clock::now() < deadline) {
        t.flush_backlog();
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    reader.join();
    EXPECT_TRUE(file_got == f.bytes);

    t.shutdown_write();
    char c;
    EXPECT_EQ(SSL_read(client.ssl, &c, 1), 0);
    EXPECT_EQ(SSL_get_error(client.ssl, 0), SSL_ERROR_ZERO_RETURN) << "close_notify came first";
    ERR_clear_error();
}

TEST_F(TransportTest, TlsTakesBytesReadBeforeItAndRefusesPlainHttp) {
    {
        // Ciphertext read before the transport began (after a PROXY header) is the handshake's.
        Pair p;
        TlsTransport t(io, p.server(), config().tls);
        OpenSslClient client(p.client());
        std::thread peer([&] { EXPECT_EQ(SSL_connect(client.ssl), 1); });
        ASSERT_TRUE(wait_readable(t.fd()));
        char hello[16384];
        const ssize_t n = read(t.fd(), hello, sizeof hello);
        ASSERT_GT(n, 0);
        t.prepend_input({hello, size_t(n)});
        EXPECT_EQ(handshake(t), TlsTransport::Step::Done);
        peer.join();
    }
    {
        Pair p;
        TlsTransport t(io, p.server(), config().tls);
        ASSERT_EQ(write(p.client(), "GET / HTTP/1.1\r\n\r\n", 18), 18);
        EXPECT_EQ(handshake(t), TlsTransport::Step::PlainHttp);
        EXPECT_EQ(io.stats().read().tls_failures[size_t(TlsFailure::PlainHttp)], 1u);
    }
}

}  // namespace
}  // namespace rivet::engine::testing
