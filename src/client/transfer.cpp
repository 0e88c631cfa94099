// The Transfer's state machine. Each step either finishes at once or waits for one readiness
// event (one net::Loop watch on the connection's socket, re-aimed as the step needs) or a timer.
#include "client/transfer.hpp"

#include <algorithm>
#include <array>
#include <cstring>

#include "client/conn.hpp"
#include "client/resolver.hpp"
#include "http/body_decoder.hpp"
#include "http/response_parser.hpp"

namespace rivet::client {

namespace {

constexpr size_t kReadChunk = 16 * 1024;

bool idempotent(const std::string& m) {
    return m == "GET" || m == "HEAD" || m == "OPTIONS" || m == "PUT" || m == "DELETE" ||
           m == "TRACE";
}

bool has_field(const Fields& f, std::string_view name) {
    return std::any_of(f.begin(), f.end(),
                       [&](const auto& h) { return http::iequals(h.first, name); });
}

bool valid_value(std::string_view v) {
    return std::none_of(v.begin(), v.end(),
                        [](char c) { return c == '\r' || c == '\n' || c == 0; });
}

}  // namespace

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
    void finish();
    bool follow_redirect();

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

const char* Transfer::Impl::build_request() {
    if (!http::is_token(req.method)) return "invalid method";
    out = req.method + " " + req.url.target + " HTTP/1.1\r\n";
    if (!has_field(req.headers, "host")) out += "Host: " + req.url.authority + "\r\n";
    for (const auto& [name, value] : req.headers) {
        if (!http::is_token(name)) return "invalid field name";
        if (!valid_value(value)) return "invalid field value";
        if (http::iequals(name, "content-length") || http::iequals(name, "transfer-encoding"))
            continue;  // the body's framing is the client's to write
        out += name + ": " + value + "\r\n";
    }
    const bool expects_body = req.method == "POST" || req.method == "PUT" || req.method == "PATCH";
    if (!req.body.empty() || expects_body)
        out += "Content-Length: " + std::to_string(req.body.size()) + "\r\n";
    out += "\r\n";
    out += req.body;
    return nullptr;
}

void Transfer::Impl::step_send() {
    while (out_sent < out.size()) {
        size_t n = 0;
        switch (conn->write(std::string_view(out).substr(out_sent), n)) {
            case Io::Done:
                out_sent += n;
                continue;
            case Io::WantWrite:
                return watch(net::kWritable);
            case Io::WantRead:
                return watch(net::kReadable);
            case Io::Eof:
                return on_eof();
            case Io::Failed:
                return fail(ErrorKind::Closed,
                            "sending to " + req.url.authority + ": " + conn->error);
        }
    }
    phase = Phase::Reading;
    watch(net::kReadable);
    step_read();  // a TLS session may already hold the answer's first records
}

void Transfer::Impl::step_read() {
    for (int rounds = 0; rounds < 16; ++rounds) {  // then yield to the loop's other work
        const size_t old = in.size();
        in.resize(old + kReadChunk);
        size_t n = 0;
        const Io rc = conn->read(in.data() + old, kReadChunk, n);
        in.resize(old + n);
        if (rc == Io::WantRead) return watch(net::kReadable);
        if (rc == Io::WantWrite) return watch(net::kWritable);
        if (rc == Io::Eof) return on_eof();
        if (rc == Io::Failed)
            return fail(ErrorKind::Closed,
                        "reading from " + req.url.authority + ": " + conn->error);
        got_bytes = true;
        if (!head_done && !take_head()) {
            if (phase == Phase::Done) return;
            continue;
        }
        if (phase == Phase::Done) return;
        take_body();
        if (phase != Phase::Reading) return;
    }
}

// Parses the head once its end has arrived (or it is too large to be one); false: not yet.
bool Transfer::Impl::take_head() {
    for (;;) {
        const size_t from = searched > 3 ? searched - 3 : 0;
        const size_t end = in.find("\r\n\r\n", from);
        const size_t cap = req.options.max_header_bytes + 8 * 1024;
        if (end == std::string::npos && in.size() <= cap) {
            searched = in.size();
            // A prefix that is already wrong (not HTTP at all) is refused at once.
            http::ResponseHead probe;
            std::array<http::Header, 1> one;
            http::ResponseLimits lim;
            lim.max_headers = 1000;
            if (http::parse_response_head(in, false, probe, one, lim).kind ==
                    http::ParseResult::Error &&
                in.find('\n') != std::string::npos && in.find("\r\n") == std::string::npos) {
                fail(ErrorKind::Malformed, "malformed response from " + req.url.authority);
            }
            return false;
        }
        std::vector<http::Header> storage(101);
        http::ResponseHead head;
        http::ResponseLimits lim;
        lim.max_header_bytes = req.options.max_header_bytes;
        const auto r = http::parse_response_head(in, req.method == "HEAD", head, storage, lim);
        if (r.kind == http::ParseResult::Incomplete) {  // only a head past the cap gets here
            fail(ErrorKind::TooLarge, "response head from " + req.url.authority + " too large");
            return false;
        }
        if (r.kind == http::ParseResult::Error) {
            const bool big =
                std::strstr(r.reason, "too large") || std::strstr(r.reason, "too long");
            fail(big ? ErrorKind::TooLarge : ErrorKind::Malformed,
                 std::string("malformed response from ") + req.url.authority + ": " + r.reason);
            return false;
        }
        if (head.interim()) {
            if (head.status == 101) {
                fail(ErrorKind::Malformed, "unexpected 101 from " + req.url.authority);
                return false;
            }
            in.erase(0, r.head_bytes);  // 100 Continue, 103 Early Hints: the final one follows
            searched = 0;
            continue;
        }
        resp.status = head.status;
        resp.reason = std::string(head.reason);
        for (const auto& h : head.headers) resp.headers.emplace_back(h.name, h.value);
        keep_alive = head.keep_alive;
        head_done = true;
        const uint64_t max = req.options.max_response_bytes;
        switch (head.body) {
            case http::ResponseBody::None:
                break;
            case http::ResponseBody::UntilClose:
                until_close = true;
                break;
            case http::ResponseBody::ContentLength:
                if (head.content_length > max) {
                    fail(ErrorKind::TooLarge,
                         "response body of " + std::to_string(head.content_length) +
                             " bytes is over the limit of " + std::to_string(max));
                    return false;
                }
                [[fallthrough]];
            case http::ResponseBody::Chunked:
                body.emplace(http::decoder_framing(head.body), head.content_length, max);
                break;
        }
        in.erase(0, r.head_bytes);
        if (head.body == http::ResponseBody::None) {
            finish();
            return false;
        }
        return true;
    }
}

void Transfer::Impl::take_body() {
    const uint64_t max = req.options.max_response_bytes;
    if (until_close) {
        if (resp.body.size() + in.size() > max)
            return fail(ErrorKind::TooLarge,
                        "response body over the limit of " + std::to_string(max) + " bytes");
        resp.body += in;
        in.clear();
        return;
    }
    const auto r = body->feed(in, &resp.body);
    if (r.kind == http::BodyDecoder::Result::Error)
        return fail(r.status == 413 ? ErrorKind::TooLarge : ErrorKind::Malformed,
                    r.status == 413
                        ? "response body over the limit of " + std::to_string(max) + " bytes"
                        : std::string("malformed chunked body from ") + req.url.authority + ": " +
                              r.reason);
    in.erase(0, r.consumed);
    if (r.kind == http::BodyDecoder::Result::Done) {
        if (!in.empty()) keep_alive = false;  // bytes nobody asked for: do not trust the rest
        finish();
    }
}

void Transfer::Impl::on_eof() {
    if (head_done && until_close) return finish();
    // A kept-alive connection the server closed just before our request: once, on a new one.
    if (conn && conn->reused && !got_bytes && !retried && idempotent(req.method)) {
        retried = true;
        conn.reset();
        return open(true);
    }
    fail(ErrorKind::Closed, std::string("connection to ") + req.url.authority + " closed " +
                                (head_done ? "in the response body" : "before a response"));
}

bool Transfer::Impl::follow_redirect() {
    const int s = resp.status;
    if (req.options.max_redirects == 0 ||
        !(s == 301 || s == 302 || s == 303 || s == 307 || s == 308))
        return false;
    std::string_view location;
    for (const auto& [n, v] : resp.headers)
        if (http::iequals(n, "location")) location = v;
    if (location.empty()) return false;
    if (redirects == req.options.max_redirects) {
        fail(ErrorKind::TooManyRedirects,
             "more than " + std::to_string(redirects) + " redirects from " + req.url.authority);
        return true;
    }
    auto next = resolve_location(req.url, location);
    if (!next) {
        fail(ErrorKind::Malformed, "invalid Location from " + req.url.authority);
        return true;
    }
    ++redirects;
    if (s == 303 || ((s == 301 || s == 302) && req.method == "POST")) {
        req.method = s == 303 && req.method == "HEAD" ? "HEAD" : "GET";
        req.body.clear();
    }
    if (next->origin() != req.url.origin()) {  // credentials are for the origin they were for
        std::erase_if(req.headers, [](const auto& h) {
            return http::iequals(h.first, "authorization") || http::iequals(h.first, "cookie");
        });
    }
    req.url = std::move(*next);
    unwatch();
    if (keep_alive && in.empty()) give_back(std::move(conn), loop.now_ms());
    conn.reset();
    build_request();
    retried = false;
    open(false);
    return true;
}

void Transfer::Impl::finish() {
    if (follow_redirect()) return;
    phase = Phase::Done;
    stop();
    resp.reused = conn && conn->reused;
    resp.url = (req.url.tls ? "https://" : "http://") + req.url.authority + req.url.target;
    if (keep_alive && conn && in.empty()) {
        conn->reused = false;
        give_back(std::move(conn), loop.now_ms());
    }
    conn.reset();
    Outcome o;
    o.response = std::move(resp);
    Done d = std::move(done);
    d(std::move(o));
}

std::unique_ptr<Transfer> Transfer::start(net::Loop& loop, Request request, Done done) {
    auto impl = std::make_unique<Impl>(loop, std::move(request), std::move(done));
    Impl* raw = impl.get();
    std::unique_ptr<Transfer> t(new Transfer(std::move(impl)));
    raw->begin();
    return t;
}

Transfer::Transfer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Transfer::~Transfer() = default;

}  // namespace rivet::client
