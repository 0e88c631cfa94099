// Transfer::Impl, the Transfer's state machine, shared by transfer.cpp (starting, connecting,
// sending, the streamed body's accessors) and transfer_read.cpp (reading the response, redirects,
// the end). Each step either finishes at once or waits for one readiness event (one net::Loop
// watch on the connection's socket, re-aimed as the step needs) or a timer.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "client/conn.hpp"
#include "client/resolver.hpp"
#include "client/transfer.hpp"
#include "http/body_decoder.hpp"
#include "http/request_parser.hpp"

namespace rivet::client {

struct Transfer::Impl {
    enum class Phase : uint8_t { Idle, Resolving, Connecting, Handshaking, Sending, Reading, Done };

    net::Loop& loop;
    Request req;
    Done done;
    // Callbacks that may outlive the Transfer (a posted resolution) hold this token weakly.
    std::shared_ptr<Impl*> token = std::make_shared<Impl*>(this);

    Phase phase = Phase::Idle;
    std::unique_ptr<Conn> conn;
    uint64_t resolve_id = 0;
    net::Loop::WatchId watch_id = 0;
    uint32_t watch_interest = 0;
    net::Loop::TimerId connect_timer = 0, total_timer = 0;
    std::vector<Address> addrs;
    size_t next_addr = 0;
    std::string connect_error;

    std::string out;
    size_t out_sent = 0;
    std::string in;
    size_t searched = 0;  // bytes of `in` known to hold no end of head
    bool head_done = false, until_close = false, keep_alive = false, got_bytes = false;
    bool retried = false;
    unsigned redirects = 0;
    std::optional<http::BodyDecoder> body;
    Response resp;
    uint64_t body_total = 0;  // received payload bytes (the bound of a body ended by the close)

    // Streamed (req.stream): the head went to `done`; the body waits in resp.body.
    bool head_reported = false, paused = false, body_ended = false;
    std::optional<Error> body_error;
    std::function<void()> body_cb;

    Impl(net::Loop& l, Request r, Done d) : loop(l), req(std::move(r)), done(std::move(d)) {}
    ~Impl() { stop(); }

    // --- life cycle ---
    void begin() {
        if (const char* why = build_request()) return post_fail(ErrorKind::InvalidRequest, why);
        if (req.options.total_timeout_ms)
            total_timer = loop.call_after(req.options.total_timeout_ms, [this] {
                total_timer = 0;
                fail(ErrorKind::Timeout, "no complete response within " +
                                             std::to_string(req.options.total_timeout_ms) + " ms");
            });
        open(false);
    }

    std::string pool_key() const {
        std::string k = req.url.origin();
        if (req.url.tls)
            k += req.options.verify_peer ? " verify " + req.options.ca_file : " noverify";
        return k;
    }

    void open(bool fresh) {
        reset_exchange();
        if (!fresh) conn = take_idle(pool_key(), loop.now_ms());
        if (conn) return start_send();
        if (req.options.connect_timeout_ms)
            connect_timer = loop.call_after(req.options.connect_timeout_ms, [this] {
                connect_timer = 0;
                if (phase == Phase::Resolving)
                    return fail(ErrorKind::Dns, "no address for " + req.url.host + " within " +
                                                    std::to_string(req.options.connect_timeout_ms) +
                                                    " ms");
                fail(ErrorKind::ConnectTimeout,
                     "no connection to " + req.url.authority + " within " +
                         std::to_string(req.options.connect_timeout_ms) + " ms");
            });
        phase = Phase::Resolving;
        std::weak_ptr<Impl*> weak = token;
        resolve_id = resolve(loop, req.url.host, req.url.port,
                             [weak](std::vector<Address> a, std::string error) {
                                 if (auto t = weak.lock()) (*t)->resolved(std::move(a), error);
                             });
    }

    void reset_exchange() {
        unwatch();
        in.clear();
        searched = 0;
        head_done = until_close = keep_alive = got_bytes = false;
        body.reset();
        resp = Response{};
        body_total = 0;
        out_sent = 0;
        addrs.clear();
        next_addr = 0;
    }

    void stop() {
        unwatch();
        if (connect_timer) loop.cancel_timer(connect_timer);
        if (total_timer) loop.cancel_timer(total_timer);
        connect_timer = total_timer = 0;
        cancel_resolve(resolve_id);
        resolve_id = 0;
    }

    void fail(ErrorKind kind, std::string message) {
        if (phase == Phase::Done) return;
        phase = Phase::Done;
        stop();
        conn.reset();
        if (head_reported) {
            body_error = Error{kind, std::move(message)};
            return notify_body();
        }
        Outcome o;
        o.error = Error{kind, std::move(message)};
        Done d = std::move(done);
        d(std::move(o));  // the last act: it may destroy this Transfer
    }

    void post_fail(ErrorKind kind, std::string message) {
        std::weak_ptr<Impl*> weak = token;
        loop.post([weak, kind, message] {
            if (auto t = weak.lock()) (*t)->fail(kind, message);
        });
    }

    // --- connecting ---
    void resolved(std::vector<Address> a, const std::string& error) {
        resolve_id = 0;
        if (a.empty()) return fail(ErrorKind::Dns, error);
        addrs = std::move(a);
        connect_next();
    }

    void connect_next() {
        while (next_addr < addrs.size()) {
            const Address& a = addrs[next_addr++];
            conn = std::make_unique<Conn>();
            conn->origin = pool_key();
            const Io rc = conn->connect(a.addr, a.len);
            if (rc == Io::Done) return connected();
            if (rc == Io::WantWrite) {
                phase = Phase::Connecting;
                return watch(net::kWritable);
            }
            connect_error = conn->error;
        }
        fail(ErrorKind::Connect, "cannot connect to " + req.url.authority + ": " +
                                     (connect_error.empty() ? "no address" : connect_error));
    }

    void on_connect_ready() {
        if (conn->finish_connect() == Io::Done) return connected();
        connect_error = conn->error;
        unwatch();
        connect_next();
    }

    void connected() {
        count_opened();
        if (!req.url.tls) return connection_ready();
        if (!conn->start_tls(req.url.host, req.options)) return fail(ErrorKind::Tls, conn->error);
        phase = Phase::Handshaking;
        step_handshake();
    }

    void step_handshake() {
        switch (conn->handshake()) {
            case Io::Done:
                return connection_ready();
            case Io::WantRead:
                return watch(net::kReadable);
            case Io::WantWrite:
                return watch(net::kWritable);
            case Io::Eof:
                return fail(ErrorKind::Tls, "TLS handshake with " + req.url.authority +
                                                ": the server closed the connection");
            case Io::Failed:
                return fail(ErrorKind::Tls,
                            "TLS handshake with " + req.url.authority + ": " + conn->error);
        }
    }

    void connection_ready() {
        if (connect_timer) loop.cancel_timer(connect_timer);
        connect_timer = 0;
        start_send();
    }

    // --- the request ---
    const char* build_request();
    void start_send() {
        phase = Phase::Sending;
        out_sent = 0;
        step_send();
    }
    void step_send();
    void step_read();
    bool take_head();
    void take_body();
    void on_eof();
    void body_arrived();
    void finish();
    bool follow_redirect();

    // --- a streamed body ---
    void notify_body() {
        // One-shot: the reader sets it again for its next wait (from inside it, too).
        if (!body_cb) return;
        std::function<void()> cb = std::exchange(body_cb, nullptr);
        cb();
    }
    void report_head() {
        head_reported = true;
        Outcome o;
        o.response = resp;  // the head; the body follows through take_body()
        o.response->reused = conn && conn->reused;
        o.response->url =
            (req.url.tls ? "https://" : "http://") + req.url.authority + req.url.target;
        Done d = std::move(done);
        d(std::move(o));
    }
    bool will_redirect() const {
        const int s = resp.status;
        if (req.options.max_redirects == 0 ||
            !(s == 301 || s == 302 || s == 303 || s == 307 || s == 308))
            return false;
        for (const auto& [n, v] : resp.headers)
            if (http::iequals(n, "location")) return true;
        return false;
    }
    void resume_reading() {
        if (!paused || phase != Phase::Reading) return;
        paused = false;
        std::weak_ptr<Impl*> weak = token;
        // From the loop, not inside the reader's call; a TLS session may hold decrypted bytes
        // that no readiness event would announce, so read at once rather than wait for one.
        loop.post([weak] {
            if (auto t = weak.lock()) (*t)->step_read();
        });
    }

    // --- the watch ---
    void watch(uint32_t interest) {
        if (watch_id && watch_interest == interest) return;
        unwatch();
        watch_interest = interest;
        watch_id = loop.watch(conn->fd, interest, [this](uint32_t) { on_io(); });
    }
    void unwatch() {
        if (watch_id) loop.unwatch(watch_id);
        watch_id = 0;
        watch_interest = 0;
    }
    void on_io() {
        switch (phase) {
            case Phase::Connecting:
                return on_connect_ready();
            case Phase::Handshaking:
                return step_handshake();
            case Phase::Sending:
                return step_send();
            case Phase::Reading:
                return step_read();
            default:
                return;
        }
    }
};

}  // namespace rivet::client
