// Transfer::Impl's reading side: the response head (http::parse_response_head, interim heads
// skipped), the body (http::BodyDecoder, or until the close), a streamed body's window, the
// server's close, redirects, and the end (the connection pooled when the response allows it).
#include <algorithm>
#include <array>
#include <cstring>

#include "client/transfer_impl.hpp"
#include "http/response_parser.hpp"

namespace rivet::client {

namespace {

constexpr size_t kReadChunk = 16 * 1024;

bool idempotent(const std::string& m) {
    return m == "GET" || m == "HEAD" || m == "OPTIONS" || m == "PUT" || m == "DELETE" ||
           m == "TRACE";
}

}  // namespace

void Transfer::Impl::step_read() {
    for (int rounds = 0; rounds < 16; ++rounds) {  // then yield to the loop's other work
        if (paused || phase != Phase::Reading) return;
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
    // Yield to the loop's other work, then go on. Posted rather than left to the watch: after a
    // paused stream resumed there is none, and a TLS session may hold bytes the socket does not
    // announce.
    std::weak_ptr<Impl*> weak = token;
    loop.post([weak] {
        if (auto t = weak.lock()) (*t)->step_read();
    });
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
        if (req.stream && !will_redirect()) {
            report_head();
            if (phase != Phase::Reading) return false;
        }
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
        body_total += in.size();
        if (body_total > max)
            return fail(ErrorKind::TooLarge,
                        "response body over the limit of " + std::to_string(max) + " bytes");
        resp.body += in;
        in.clear();
        return body_arrived();
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
        return finish();
    }
    body_arrived();
}

void Transfer::Impl::body_arrived() {
    if (!head_reported) return;
    if (resp.body.size() >= kStreamWindow) {  // the reader is behind: wait for it
        paused = true;
        unwatch();
    }
    if (!resp.body.empty()) notify_body();
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
    if (!head_reported && follow_redirect()) return;
    phase = Phase::Done;
    stop();
    if (head_reported) {
        if (keep_alive && conn && in.empty()) {
            conn->reused = false;
            give_back(std::move(conn), loop.now_ms());
        }
        conn.reset();
        body_ended = true;
        return notify_body();
    }
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

}  // namespace rivet::client
