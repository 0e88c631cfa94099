// For the tests of waiting handlers: an App on a real loopback socket and a raw client that
// can send, read a given number of responses, or go away mid-request.
#pragma once

#include <rivet/rivet.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

namespace rivet::testing {

using namespace std::chrono_literals;

class RawClient {
public:
    explicit RawClient(uint16_t port) {
        fd_ = socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_port = htons(port);
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
            throw std::runtime_error("connect failed");
        timeval tv{5, 0};
        setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    }
    ~RawClient() { close(); }
    RawClient(const RawClient&) = delete;
    RawClient& operator=(const RawClient&) = delete;

    void send(const std::string& bytes) { ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL); }
    void get(const std::string& target) { send("GET " + target + " HTTP/1.1\r\nHost: x\r\n\r\n"); }
    // The client goes away: with `reset`, a RST (SO_LINGER 0), else a FIN.
    void close(bool reset = false) {
        if (fd_ < 0) return;
        if (reset) {
            linger l{1, 0};
            setsockopt(fd_, SOL_SOCKET, SO_LINGER, &l, sizeof l);
        }
        ::close(fd_);
        fd_ = -1;
    }
    void shutdown_write() { ::shutdown(fd_, SHUT_WR); }

    // Reads until `n` responses (Content-Length framed) arrived, or EOF/timeout (5 s).
    std::string read_responses(int n) {
        while (count() < n) {
            char buf[65536];
            ssize_t r = recv(fd_, buf, sizeof buf, 0);
            if (r <= 0) break;
            got_.append(buf, size_t(r));
        }
        return got_;
    }
    // One read of whatever arrives within 5 s (false: EOF or nothing); for responses whose
    // length is not known (streams).
    bool read_some() {
        char buf[65536];
        ssize_t r = recv(fd_, buf, sizeof buf, 0);
        if (r <= 0) return false;
        got_.append(buf, size_t(r));
        return true;
    }
    // True when the server closed the connection within 5 s (bytes read meanwhile are kept).
    bool wait_eof() {
        char buf[4096];
        for (;;) {
            ssize_t r = recv(fd_, buf, sizeof buf, 0);
            if (r == 0) return true;
            if (r < 0) return false;
            got_.append(buf, size_t(r));
        }
    }
    const std::string& received() const { return got_; }

private:
    int count() const {
        int n = 0;
        size_t pos = 0;
        for (;;) {
            size_t end = got_.find("\r\n\r\n", pos);
            if (end == std::string::npos) return n;
            size_t cl = got_.find("Content-Length: ", pos);
            if (cl == std::string::npos || cl > end) return n;
            size_t len = std::stoul(got_.substr(cl + 16));
            if (got_.size() < end + 4 + len) return n;
            pos = end + 4 + len;
            ++n;
        }
    }

    int fd_ = -1;
    std::string got_;
};

// Polls `done` every 2 ms for up to `timeout`.
inline bool eventually(const std::function<bool()>& done, std::chrono::milliseconds timeout = 3s) {
    auto until = std::chrono::steady_clock::now() + timeout;
    while (!done()) {
        if (std::chrono::steady_clock::now() > until) return false;
        std::this_thread::sleep_for(2ms);
    }
    return true;
}

// Holds worker jobs until release(): `inside` counts the jobs waiting at it.
struct Gate {
    std::mutex mu;
    std::condition_variable cv;
    bool open = false;
    std::atomic<int> inside{0};
    void wait() {
        ++inside;
        std::unique_lock lock(mu);
        cv.wait(lock, [&] { return open; });
    }
    void release() {
        std::lock_guard lock(mu);
        open = true;
        cv.notify_all();
    }
};

inline std::string body_of(const std::string& response) {
    size_t end = response.find("\r\n\r\n");
    return end == std::string::npos ? std::string() : response.substr(end + 4);
}

class WaitingAppTest : public ::testing::Test {
protected:
    void start(unsigned threads = 1, unsigned workers = 2, size_t queue = 16) {
        RunOptions options;
        options.host = "127.0.0.1";
        options.port = 0;
        options.threads = threads;
        options.workers = workers;
        options.queue = queue;
        options.retry_after_s = 7;
        options.quiet = true;
        options.ops.admin.metrics = true;
        port_ = app_.start(options);
    }
    void TearDown() override { app_.stop(); }

    // One request on a fresh connection; the whole response.
    std::string fetch(const std::string& target) {
        RawClient c(port_);
        c.get(target);
        return c.read_responses(1);
    }
    std::string metrics() { return fetch("/metrics"); }

    App app_;
    uint16_t port_ = 0;
};

}  // namespace rivet::testing
