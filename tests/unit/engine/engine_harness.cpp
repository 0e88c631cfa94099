#include "engine_harness.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <future>
#include <stdexcept>
#include <system_error>
#include <thread>

namespace rivet::engine::testing {

namespace {

using Clock = std::chrono::steady_clock;

int remaining_ms(Clock::time_point deadline) {
    auto left = std::chrono::duration_cast<Millis>(deadline - Clock::now()).count();
    return left > 0 ? int(left) : 0;
}

// Parses one response at the start of `s`; returns its length, or 0 while it is unfinished.
size_t parse_one(std::string_view s, bool head_only, bool eof, ParsedResponse& r) {
    size_t end = s.find("\r\n\r\n");
    if (end == std::string_view::npos || !s.starts_with("HTTP/1.") || s.size() < 12) return 0;
    r = {};
    r.head = std::string(s.substr(0, end + 4));
    r.status = std::stoi(std::string(s.substr(9, 3)));
    size_t pos = end + 4;
    bool no_body = head_only || r.status < 200 || r.status == 204 || r.status == 304;
    std::string length = r.field("Content-Length");
    r.chunked = r.field("Transfer-Encoding") == "chunked";
    if (no_body) {
        // nothing follows the head
    } else if (!length.empty()) {
        size_t n = std::stoul(length);
        if (s.size() < pos + n) return 0;
        r.body = std::string(s.substr(pos, n));
        pos += n;
    } else if (r.chunked) {
        for (;;) {
            size_t line_end = s.find("\r\n", pos);
            if (line_end == std::string_view::npos) return 0;
            size_t size = std::stoul(std::string(s.substr(pos, line_end - pos)), nullptr, 16);
            pos = line_end + 2;
            if (size == 0) {
                // Trailer fields, if any, then the empty line.
                size_t empty = s.find("\r\n\r\n", pos - 2);
                if (empty == std::string_view::npos) return 0;
                r.trailers = std::string(s.substr(pos, empty + 2 - pos));
                pos = empty + 4;
                break;
            }
            if (s.size() < pos + size + 2) return 0;
            r.body.append(s.substr(pos, size));
            pos += size + 2;
        }
    } else {
        if (!eof) return 0;  // framed by the close
        r.body = std::string(s.substr(pos));
        pos = s.size();
    }
    r.raw = std::string(s.substr(0, pos));
    return pos;
}

}  // namespace

std::string ParsedResponse::field(std::string_view name) const {
    std::string key = "\r\n" + std::string(name) + ": ";
    size_t at = head.find(key);
    if (at == std::string::npos) return "";
    size_t from = at + key.size();
    return head.substr(from, head.find("\r\n", from) - from);
}

std::string ParsedResponse::raw_without_date() const {
    std::string out = raw;
    size_t at = out.find("\r\nDate: ");
    if (at != std::string::npos) out.erase(at + 2, out.find("\r\n", at + 2) - at);
    return out;
}

std::vector<ParsedResponse> parse_responses(std::string_view bytes,
                                            const std::vector<bool>& head_only, bool eof,
                                            std::string* rest) {
    std::vector<ParsedResponse> out;
    size_t pos = 0;
    while (pos < bytes.size()) {
        ParsedResponse r;
        // Interim (1xx) answers do not use up a HEAD flag: they precede the real response.
        size_t final_index = 0;
        for (auto& p : out) final_index += p.status >= 200 ? 1 : 0;
        bool head = final_index < head_only.size() && head_only[final_index];
        size_t n = parse_one(bytes.substr(pos), head, eof, r);
        if (n == 0) break;
        out.push_back(std::move(r));
        pos += n;
    }
    if (rest) *rest = std::string(bytes.substr(pos));
    return out;
}

// ---- Client ----

Client::~Client() {
    if (fd_ >= 0) close(fd_);
}

void Client::send(std::string_view bytes) {
    auto deadline = Clock::now() + 2s;
    while (!bytes.empty()) {
        ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            bytes.remove_prefix(size_t(n));
            continue;
        }
        if (n < 0 && errno != EAGAIN && errno != EINTR) return;  // the engine closed: tests see it
        pollfd p{fd_, POLLOUT, 0};
        if (poll(&p, 1, remaining_ms(deadline)) <= 0) return;  // the engine stopped reading
    }
}

void Client::send_in_pieces(std::string_view bytes, size_t piece, Millis pause) {
    while (!bytes.empty()) {
        size_t n = std::min(piece, bytes.size());
        send(bytes.substr(0, n));
        bytes.remove_prefix(n);
        if (!bytes.empty()) std::this_thread::sleep_for(pause);
    }
}

void Client::shutdown_write() {
    ::shutdown(fd_, SHUT_WR);
}

bool Client::read_once(Millis wait) {
    if (eof_) return false;
    pollfd p{fd_, POLLIN, 0};
    int ready = poll(&p, 1, int(wait.count()));
    if (ready <= 0) return false;
    char buf[64 * 1024];
    ssize_t n = recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
    if (n > 0) {
        received_.append(buf, size_t(n));
        ++reads_;
        return true;
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return true;
    eof_ = true;  // 0, or a reset: either way the engine is gone
    return false;
}

std::vector<ParsedResponse> Client::read_responses(size_t n, Millis timeout,
                                                   const std::vector<bool>& head_only) {
    auto deadline = Clock::now() + timeout;
    for (;;) {
        auto got = parse_responses(received_, head_only, eof_);
        if (got.size() >= n || eof_) return got;
        int left = remaining_ms(deadline);
        if (left == 0) return got;
        read_once(Millis(left));
    }
}

bool Client::read_until(std::string_view needle, Millis timeout) {
    auto deadline = Clock::now() + timeout;
    while (received_.find(needle) == std::string::npos) {
        int left = remaining_ms(deadline);
        if (left == 0 || eof_) return false;
        read_once(Millis(left));
    }
    return true;
}

bool Client::wait_eof(Millis timeout) {
    auto deadline = Clock::now() + timeout;
    while (!eof_) {
        int left = remaining_ms(deadline);
        if (left == 0) return false;
        read_once(Millis(left));
    }
    return true;
}

std::string Client::read_for(Millis window) {
    size_t before = received_.size();
    auto deadline = Clock::now() + window;
    while (!eof_) {
        int left = remaining_ms(deadline);
        if (left == 0) break;
        read_once(Millis(left));
    }
    return received_.substr(before);
}

// ---- TestApp ----

void TestApp::serve(Exchange& exchange) {
    {
        std::lock_guard lock(mu_);
        ++served_;
        bodies_.emplace_back(exchange.body());
    }
    cv_.notify_all();
    if (handler_) return handler_(exchange);
    const auto& head = exchange.head();
    exchange.respond(rivet::app::view_of(
        rivet::Response(200).text(std::string(head.method_name) + " " + std::string(head.target) +
                                  " body=" + std::string(exchange.body()))));
}

void TestApp::plan_body(const http::RequestHead& head, BodyPlan& plan) {
    if (planner_) planner_(head, plan);
}

void TestApp::answer_protocol_error(const ProtocolError& error, ErrorReply& reply) {
    if (shaper_) shaper_(error, reply);
}

void TestApp::on_protocol_error(unsigned, const PeerIp&, int status) {
    std::lock_guard lock(mu_);
    errors_.push_back(status);
}

void TestApp::keep(Deferred d) {
    {
        std::lock_guard lock(mu_);
        kept_.push_back(std::move(d));
    }
    cv_.notify_all();
}

std::vector<Deferred> TestApp::take_deferred(size_t n, Millis timeout) {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, timeout, [&] { return kept_.size() >= n; });
    std::vector<Deferred> out;
    out.swap(kept_);
    return out;
}

bool TestApp::wait_served(size_t n, Millis timeout) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return served_ >= n; });
}

std::vector<std::string> TestApp::bodies() const {
    std::lock_guard lock(mu_);
    return bodies_;
}

std::vector<int> TestApp::protocol_errors() const {
    std::lock_guard lock(mu_);
    return errors_;
}

void TestApp::drop_deferred() {
    std::vector<Deferred> dropped;
    std::lock_guard lock(mu_);
    dropped.swap(kept_);  // destroyed here: each answers 500
}

// ---- EngineHarness ----

EngineHarness::EngineHarness(ServerConfig config, TestApp::Handler handler,
                             TestApp::Planner planner, TestApp::ErrorShaper shaper) {
    config.threads = 1;
    app_.set_planner(std::move(planner));
    app_.set_error_shaper(std::move(shaper));
    // Teardown drains: a connection a test left busy is cut off after this, never waited for.
    config.timeouts.drain_ms = 1000;
    app_.set_handler(std::move(handler));
    io_ = std::make_unique<IoThread>(0, config, app_, std::vector<int>{});
    io_->start();
}

EngineHarness::~EngineHarness() {
    app_.drop_deferred();  // a Deferred must not outlive the loop it posts to
    io_->begin_drain();
    io_->join();
}

std::unique_ptr<Client> EngineHarness::connect(int server_sndbuf, const sockaddr_storage* peer,
                                               bool tls) {
    int fds[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
        throw std::system_error(errno, std::generic_category(), "socketpair");
    int server = fds[0];
    fcntl(server, F_SETFL, fcntl(server, F_GETFL) | O_NONBLOCK);  // as accept4 would make it
    if (server_sndbuf > 0)
        setsockopt(server, SOL_SOCKET, SO_SNDBUF, &server_sndbuf, sizeof server_sndbuf);
    sockaddr_storage addr{};
    addr.ss_family = AF_UNIX;
    if (peer) addr = *peer;
    IoThread* io = io_.get();
    io_->loop().post([io, server, addr, tls] { io->adopt(server, addr, tls); });
    return std::make_unique<Client>(fds[1]);
}

bool EngineHarness::sync(Millis timeout) {
    // Shared: after a timeout the task may still run, and must find the promise alive.
    auto done = std::make_shared<std::promise<void>>();
    auto ready = done->get_future();
    io_->loop().post([done] { done->set_value(); });
    return ready.wait_for(timeout) == std::future_status::ready;
}

std::string request(std::string_view method, std::string_view target, std::string_view fields,
                    std::string_view body) {
    std::string r = std::string(method) + " " + std::string(target) + " HTTP/1.1\r\nHost: t\r\n";
    r += fields;
    if (!body.empty()) r += "Content-Length: " + std::to_string(body.size()) + "\r\n";
    r += "\r\n";
    r += body;
    return r;
}

sockaddr_storage v4_peer(const char* ip) {
    sockaddr_storage ss{};
    auto& a = reinterpret_cast<sockaddr_in&>(ss);
    a.sin_family = AF_INET;
    inet_pton(AF_INET, ip, &a.sin_addr);
    return ss;
}

}  // namespace rivet::engine::testing
