// Connection: the socket side every protocol shares; the stages before the session.
#include "engine/connection.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <unistd.h>
#include <cerrno>
#include <cstring>

#include "engine/http1/session.hpp"
#include "engine/http2/session.hpp"
#include "engine/io_thread.hpp"
#include "engine/transport_tls.hpp"

namespace rivet::engine {

Connection::Connection(IoThread& owner, int fd, uint64_t id, const sockaddr_storage& peer, bool tls)
    : owner_(owner), id_(id), fd_(fd), tls_listener_(tls) {
    set_peer(peer);
    if (tls) {
        transport_ = std::make_unique<TlsTransport>(owner_, fd, owner_.config().tls);
        stage_ = Stage::Handshake;
    } else {
        transport_ = std::make_unique<TcpTransport>(owner_, fd);
    }
    if (owner_.config().proxy_protocol) expect_proxy_header(peer);
    interest_ = net::kReadable;
    if (stage_ != Stage::Session) arm_stage_timer(owner_.loop().now_ms());
}

Connection::~Connection() {
    owner_.loop().timers().cancel(*this);
}

void Connection::start() {
    IoThread::ConnectionEvent event(owner_);
    // The listener defers accepting until a connection's first bytes have arrived
    // (TCP_DEFER_ACCEPT), so they are usually here already: serve them now. A connection
    // answered and closed in this call (Connection: close) never touches epoll; one that stays
    // registers with the interest its stage and session ask for.
    if (stage_ == Stage::ProxyHeader)
        read_proxy_header();
    else
        begin_transport({}, owner_.loop().now_ms());
    if (stage_ == Stage::Closed) return;
    registered_ = true;
    owner_.loop().add(fd_, interest_, this);
}

std::string Connection::peer_address() const {
    char buf[INET6_ADDRSTRLEN] = "";
    inet_ntop(peer_family_ == AF_INET6 ? AF_INET6 : AF_INET, peer_bytes_, buf, sizeof buf);
    return buf;
}

PeerIp Connection::peer_ip() const {
    PeerIp ip;
    ip.family = peer_family_;
    std::memcpy(ip.bytes, peer_bytes_, sizeof ip.bytes);
    return ip;
}

unsigned Connection::loop_index() const {
    return owner_.index();
}

TlsTransport& Connection::tls() {
    return static_cast<TlsTransport&>(*transport_);
}

void Connection::set_interest(uint8_t events) {
    if (events == interest_) return;
    interest_ = events;
    if (registered_) owner_.loop().modify(fd_, events, this);  // else start() adds it so
}

void Connection::schedule(uint64_t ms) {
    owner_.loop().timers().schedule(*this, ms);
}

void Connection::cancel_timer() {
    owner_.loop().timers().cancel(*this);
}

void Connection::on_io(uint32_t events) {
    IoThread::ConnectionEvent event(owner_);
    if (stage_ == Stage::Closed) return;
    if (events & net::kHangup) {
        // Both directions are gone (reset, or a lingering shutdown met the client's close):
        // nothing can be sent any more.
        return close_now();
    }
    switch (stage_) {
        case Stage::Session:
            if (events & net::kWritable) session_->on_writable();
            if ((events & net::kReadable) && stage_ == Stage::Session) session_->on_readable();
            return;
        case Stage::Resting:
            if (events & net::kReadable) wake();
            return;
        case Stage::Handshake:
            // Handshake messages the socket did not take go first.
            if ((events & net::kWritable) && !transport_->flush_backlog() && errno != EAGAIN &&
                errno != EINTR)
                return close_now();
            if (events & net::kReadable) run_handshake();
            if (stage_ == Stage::Handshake)
                set_interest(uint8_t(net::kReadable |
                                     (transport_->backlog() ? uint8_t(net::kWritable) : 0)));
            return;
        case Stage::ProxyHeader:
            if (events & net::kReadable) read_proxy_header();
            return;
        case Stage::Closed:
            return;
    }
}

void Connection::arm_stage_timer(uint64_t since_ms) {
    const auto& t = owner_.config().timeouts;
    // From the accept, whatever the client sends meanwhile: a slow header or handshake cannot
    // hold the connection past it.
    const uint64_t deadline =
        since_ms + (stage_ == Stage::Handshake ? t.handshake_ms : t.header_ms);
    const uint64_t now = owner_.loop().now_ms();
    schedule(deadline > now ? deadline - now : 0);
}

void Connection::on_timeout() {
    IoThread::ConnectionEvent event(owner_);
    if (stage_ == Stage::Session) return session_->on_timeout();
    // The idle timeout of a resting connection, or the PROXY header or the handshake took too
    // long: close quietly, as nginx does.
    if (stage_ == Stage::Handshake) tls().count_failure(TlsFailure::Timeout);
    close_now();
}

// `accepted_ms`: the handshake is timed from the accept, the PROXY header's time included.
void Connection::begin_transport(std::string_view input, uint64_t accepted_ms) {
    if (!tls_listener_) return begin_session(input);
    stage_ = Stage::Handshake;
    if (!input.empty()) tls().prepend_input(input);
    arm_stage_timer(accepted_ms);
    run_handshake();
}

void Connection::run_handshake() {
    switch (tls().handshake()) {
        case TlsTransport::Step::More:
            if (tls().unread_input()) owner_.kick(*this);  // more of a PROXY read waits
            return;
        case TlsTransport::Step::Failed:
            return close_now();  // after the alert the handshake sent, as far as it went
        case TlsTransport::Step::PlainHttp:
            return refuse_plain_http();
        case TlsTransport::Step::Done:
            // The request head's clock starts now, as nginx's client_header_timeout does after
            // the handshake: the handshake had its own.
            return begin_session({});
    }
}

// A request in plain HTTP on the TLS port gets a plain-HTTP 400 that says where it went wrong,
// as nginx answers, from an HTTP/1.1 session on the bare socket.
void Connection::refuse_plain_http() {
    transport_ = std::make_unique<TcpTransport>(owner_, transport_->release());
    stage_ = Stage::Session;
    auto session = std::make_unique<Http1Session>(*this);
    Http1Session& http = *session;
    session_ = std::move(session);
    http.refuse(400, "the plain HTTP request was sent to the HTTPS port");
}

// The protocol is known: what ALPN chose on TLS ("h2": HTTP/2), HTTP/1.1 else. A plain
// connection that starts with HTTP/2's preface is handed over by its HTTP/1.1 session.
void Connection::begin_session(std::string_view input) {
    stage_ = Stage::Session;
    if (tls_listener_ && owner_.config().http2.enabled && transport_->tls_facts().alpn == "h2")
        session_ = std::make_unique<Http2Session>(*this);
    else
        session_ = std::make_unique<Http1Session>(*this);
    session_->start(input);
}

void Connection::hand_off(std::unique_ptr<Session> next, std::string_view input) {
    owner_.retire(std::move(session_));
    session_ = std::move(next);
    cancel_timer();  // the old session's: the new one arms its own
    session_->start(input);
}

void Connection::rest() {
    owner_.retire(std::move(session_));
    stage_ = Stage::Resting;
    LoopStats::bump(owner_.stats().idle_connections);
    set_interest(net::kReadable);
    schedule(owner_.config().timeouts.idle_ms);
}

// A resting connection's next bytes (or its EOF): a fresh session reads them. Its head's clock
// starts now, at the first byte, as it would have in the old session.
void Connection::wake() {
    make_session();
    session_->on_readable();
}

void Connection::make_session() {
    session_ = std::make_unique<Http1Session>(*this);
    LoopStats::bump(owner_.stats().idle_connections, uint64_t(-1));
    stage_ = Stage::Session;
}

void Connection::complete(uint64_t sequence, Reply&& reply) {
    IoThread::ConnectionEvent event(owner_);
    if (stage_ == Stage::Session) session_->complete(sequence, std::move(reply));
}

bool Connection::admit_waiting_body() {
    IoThread::ConnectionEvent event(owner_);
    return stage_ != Stage::Session || session_->admit_waiting_body();
}

void Connection::kicked() {
    IoThread::ConnectionEvent event(owner_);
    if (stage_ == Stage::Session) return session_->kicked();
    if (stage_ == Stage::Handshake) run_handshake();
}

void Connection::resume_stream(const StreamLink* link) {
    IoThread::ConnectionEvent event(owner_);
    if (stage_ == Stage::Session) session_->resume_stream(link);
}

void Connection::close_when_idle() {
    IoThread::ConnectionEvent event(owner_);
    // A handshake or PROXY header in progress may finish: their timeouts bound them, as the
    // header timeout bounds a fresh connection's request.
    // A resting connection gets its session back, which decides as it would have had it stayed
    // (a request unread in the socket is read and answered, not met with a RST).
    if (stage_ == Stage::Resting) make_session();
    if (stage_ == Stage::Session) session_->close_when_idle();
}

void Connection::close_now() {
    if (stage_ == Stage::Closed) return;
    IoThread::ConnectionEvent event(owner_);
    // Whatever ends a handshake without a reason of its own (a reset, a hang-up, a failed
    // write) is the client's doing.
    if (stage_ == Stage::Handshake) tls().count_failure(TlsFailure::PeerClosed);
    const bool had_session = stage_ == Stage::Session;
    if (stage_ == Stage::Resting) LoopStats::bump(owner_.stats().idle_connections, uint64_t(-1));
    stage_ = Stage::Closed;
    owner_.loop().timers().cancel(*this);
    // Closing the socket drops its epoll registration only if no other process holds a copy:
    // a child forked by anything in this process (an in-place upgrade, a handler's system() or
    // popen()) holds one until it execs, and the loop would go on reporting events for this
    // Connection after it is freed. So the registration goes first; a connection answered and
    // closed in its first read was never registered and costs nothing.
    if (registered_) owner_.loop().remove(fd_);
    ::close(transport_->release());
    owner_.connection_closed(this);  // freed at the end of the turn: still ours below
    // Last: whoever waits on the session (deferred answers) learns of the close after it.
    if (had_session) session_->on_closed();
}

}  // namespace rivet::engine
