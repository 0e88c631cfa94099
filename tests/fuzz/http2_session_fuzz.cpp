// libFuzzer target: arbitrary bytes to the engine's HTTP/2 session (engine/http2/), over the
// smallest real path: a socketpair whose one end an IoThread adopts as a plain connection (so
// the HTTP/1.1 session hands it over on the preface), its Application answering every request.
//
// The first input byte picks: bit 0, the preface goes first (the rest is frames; else the bytes
// go as they are, and reach HTTP/2 only if they start with it); bit 1, the input is written in
// two pieces, the loop done with the first before the second (the second input byte says where,
// and is not sent). The answers exercise the session's paths: bytes at once, deferred (completed
// from a task), a streamed request body pulled to its end, a producer's pieces, trailers.
//
// Per input: write everything (reading what comes back meanwhile), shut our side, and read to
// EOF: every session must close a connection whose client has gone. Beyond the sanitizers'
// checks, it traps when one does not within kHangMs.
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <future>
#include <memory>
#include <string>
#include <string_view>

#include "engine/body_source.hpp"
#include "engine/exchange.hpp"
#include "engine/io_thread.hpp"
#include "engine/server_config.hpp"
#include "http/http2/request_head.hpp"

using namespace rivet;
using namespace rivet::engine;

namespace {

constexpr int kHangMs = 20'000;

void check(bool ok) {
    if (!ok) __builtin_trap();
}

Reply text(int status, std::string body) {
    Reply r;
    r.status = status;
    r.content_type = "text/plain";
    r.body = std::move(body);
    return r;
}

// Pulls a streamed body to its end, then answers with its size.
struct Pull : std::enable_shared_from_this<Pull> {
    BodySource source;
    Deferred answer;
    size_t got = 0;

    void ask() {
        source.next([self = shared_from_this()](const BodyPiece& p) {
            if (p.kind == BodyPiece::Kind::Data) {
                self->got += p.bytes.size();
                return self->ask();
            }
            if (p.kind == BodyPiece::Kind::End)
                self->answer.complete(text(200, std::to_string(self->got) + "\n"));
        });
    }
};

class FuzzApp final : public Application {
public:
    IoThread* io = nullptr;

    void plan_body(const http::RequestHead& head, BodyPlan& plan) override {
        if (head.path.starts_with("/s")) plan.mode = BodyPlan::Mode::Streamed;
    }

    void serve(Exchange& ex) override {
        const std::string_view path = ex.head().path;
        if (path.starts_with("/s")) {
            auto pull = std::make_shared<Pull>();
            pull->source = ex.source();
            pull->answer = ex.defer();
            return pull->ask();
        }
        if (path.starts_with("/d")) {
            auto later = std::make_shared<Deferred>(ex.defer());
            later->on_cancel([] {});
            io->loop().post([later] { later->complete(text(200, "later\n")); });
            return;
        }
        if (path.starts_with("/p")) {
            auto left = std::make_shared<int>(3);
            ReplyView v;
            v.head.status = 200;
            v.head.body_kind = http::ResponseHead::Body::Streamed;
            v.stream =
                std::make_shared<StreamProducer>([left](std::string& out, const StreamWaker&) {
                    out.assign(size_t(1000 * *left), char('a' + *left));
                    return --*left > 0 ? Produced::More : Produced::Done;
                });
            v.trailers = std::make_shared<Trailers>();
            v.trailers->fields.emplace_back("x-sum", "6000");
            return ex.respond(v);
        }
        ReplyView v;
        v.head.status = 200;
        v.head.content_type = "text/plain";
        const std::string size = std::to_string(ex.body().size());
        v.head.body = size;
        ex.respond(v);
    }
};

struct Server {
    FuzzApp app;
    std::unique_ptr<IoThread> io;

    Server() {
        ServerConfig config;
        config.threads = 1;
        // Small limits, so that inputs reach them.
        config.limits.max_body = 64 * 1024;
        config.limits.max_header_bytes = 4 * 1024;
        config.limits.max_buffered_bodies = 256 * 1024;
        config.http2.max_concurrent_streams = 16;
        config.http2.stream_window = 64 * 1024;
        io = std::make_unique<IoThread>(0, config, app, std::vector<int>{});
        app.io = io.get();
        io->start();
    }

    // Waits until the loop has run what was posted before (and so read what was sent before).
    void sync() {
        auto done = std::make_shared<std::promise<void>>();
        auto ready = done->get_future();
        io->loop().post([done] { done->set_value(); });
        ready.wait();
    }
};

// Kept for the whole run (never destroyed: libFuzzer exits without tearing it down).
Server& server() {
    static Server* s = new Server;
    return *s;
}

void drain_input(int fd) {
    char buf[16 * 1024];
    while (recv(fd, buf, sizeof buf, MSG_DONTWAIT) > 0) {
    }
}

// Writes `bytes`, reading what the server answers meanwhile (so neither side waits on the other).
void write_all(int fd, std::string_view bytes) {
    while (!bytes.empty()) {
        const ssize_t n = send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            bytes.remove_prefix(size_t(n));
            continue;
        }
        if (n < 0 && errno != EAGAIN && errno != EINTR) return;  // the server closed
        pollfd p{fd, POLLIN | POLLOUT, 0};
        check(poll(&p, 1, kHangMs) > 0);
        if (p.revents & (POLLIN | POLLHUP)) drain_input(fd);
        if (p.revents & (POLLERR | POLLHUP)) return;
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    Server& s = server();
    const uint8_t ctl = data[0];
    const bool two_pieces = (ctl & 2) && size > 1;
    const size_t skip = two_pieces ? 2 : 1;  // the control byte, and the split point's
    std::string input;
    if (ctl & 1) input = http::http2::kPreface;
    input.append(reinterpret_cast<const char*>(data + skip), size - skip);
    const size_t split = two_pieces ? data[1] % (input.size() + 1) : 0;

    int fds[2];
    check(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0);
    fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK);
    const int server_fd = fds[0], client = fds[1];
    IoThread* io = s.io.get();
    io->loop().post([io, server_fd] {
        sockaddr_storage peer{};
        peer.ss_family = AF_UNIX;
        io->adopt(server_fd, peer);
    });
    if (two_pieces) {
        write_all(client, std::string_view(input).substr(0, split));
        s.sync();
        write_all(client, std::string_view(input).substr(split));
    } else {
        write_all(client, input);
    }
    shutdown(client, SHUT_WR);
    // Everything the server sends, to its close.
    for (;;) {
        pollfd p{client, POLLIN, 0};
        check(poll(&p, 1, kHangMs) > 0);  // a connection whose client left must end
        char buf[64 * 1024];
        const ssize_t n = recv(client, buf, sizeof buf, MSG_DONTWAIT);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) break;
    }
    close(client);
    return 0;
}
