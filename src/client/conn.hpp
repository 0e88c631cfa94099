// client::Conn: one connection to an origin, plain TCP or TLS (OpenSSL on the socket itself, in
// non-blocking mode), and the loop's pool of idle ones (per loop thread: a loop runs on one).
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

struct ssl_st;

namespace rivet::client {

struct Options;

// What an I/O step came to: done (n bytes), wait for readiness, or the end.
enum class Io : uint8_t { Done, WantRead, WantWrite, Eof, Failed };

struct Conn {
    int fd = -1;
    std::string origin;  // the pool key
    ssl_st* ssl = nullptr;
    uint64_t idle_since_ms = 0;
    bool reused = false;
    std::string error;  // why the last step Failed

    Conn() = default;
    ~Conn();
    Conn(const Conn&) = delete;
    Conn& operator=(const Conn&) = delete;

    // A non-blocking connect to `addr`; Failed (error set) when it cannot even begin.
    Io connect(const sockaddr_storage& addr, socklen_t len);
    // After writability: whether the connect succeeded.
    Io finish_connect();
    // TLS: sets up the session (SNI, the host name to verify, the trust store); false with error.
    bool start_tls(const std::string& host, const Options& options);
    Io handshake();
    Io write(std::string_view data, size_t& n);
    Io read(char* buf, size_t room, size_t& n);
    // An idle connection is usable when the server has neither closed it nor sent anything.
    bool still_usable();
};

// The loop thread's pool of idle kept-alive connections.
std::unique_ptr<Conn> take_idle(const std::string& origin, uint64_t now_ms);
void give_back(std::unique_ptr<Conn> conn, uint64_t now_ms);
void count_opened();

}  // namespace rivet::client
