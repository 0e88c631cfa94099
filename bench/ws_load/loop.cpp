// bench/ws_load's epoll loop (loop.hpp says what it does and why).
#include "loop.hpp"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>

namespace wsload {

uint64_t now_ns() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

namespace {

// The value of a header in a lower-cased response head ("" when absent).
std::string header_value(const std::string& lower_head, std::string_view name) {
    std::string needle = "\r\n" + std::string(name) + ":";
    size_t at = lower_head.find(needle);
    if (at == std::string::npos) return "";
    at += needle.size();
    size_t end = lower_head.find("\r\n", at);
    std::string v = lower_head.substr(at, end - at);
    v.erase(0, v.find_first_not_of(" \t"));
    v.erase(v.find_last_not_of(" \t") + 1);
    return v;
}

}  // namespace

Loop::Loop(Settings settings, Handler& handler)
    : s_(std::move(settings)), handler_(handler), buf_(256 * 1024) {
    ep_ = epoll_create1(EPOLL_CLOEXEC);
    request_tail_ = "\r\nSec-WebSocket-Version: 13\r\n";
    if (s_.deflate) {
        // The client sends uncompressed (RFC 7692 lets it); it asks the server not to keep its
        // compression context so that one inflater per connection can be reset per message.
        request_tail_ +=
            "Sec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover; "
            "client_no_context_takeover\r\n";
    }
    request_tail_ += "\r\n";
}

Loop::~Loop() {
    close_all();
    if (ep_ >= 0) ::close(ep_);
}

size_t Loop::add(size_t n) {
    size_t first = conns_.size();
    for (size_t i = 0; i < n; ++i) {
        auto c = std::make_unique<Conn>();
        c->index = uint32_t(conns_.size());
        conns_.push_back(std::move(c));
    }
    return first;
}

bool Loop::open_all(uint64_t deadline_ns) {
    auto settled = [&] { return open_ + failed_ == conns_.size(); };
    while (!settled() && now_ns() < deadline_ns) {
        while (next_to_open_ < conns_.size() && opening_ < size_t(s_.max_opening)) {
            Conn& c = *conns_[next_to_open_++];
            if (c.state == Conn::State::New) start_connect(c);
        }
        if (!settled()) poll_once(std::min(deadline_ns, now_ns() + 100000000u));
    }
    return settled();
}

void Loop::start_connect(Conn& c) {
    ++opening_;
    c.state = Conn::State::Connecting;
    c.fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (c.fd < 0) return fail(c, errors.connect);
    int one = 1;
    setsockopt(c.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(uint16_t(s_.port));
    inet_pton(AF_INET, s_.host.c_str(), &addr.sin_addr);
    if (::connect(c.fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 &&
        errno != EINPROGRESS) {
        return fail(c, errors.connect);
    }
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLOUT;
    ev.data.ptr = &c;
    epoll_ctl(ep_, EPOLL_CTL_ADD, c.fd, &ev);
    c.watching_out = true;
}

void Loop::fail(Conn& c, uint64_t& counter) {
    if (c.state == Conn::State::Closed) return;
    ++counter;
    if (c.state == Conn::State::Open) {
        --open_;
    } else {
        --opening_;  // Connecting or Handshaking
    }
    ++failed_;
    if (c.fd >= 0) ::close(c.fd);
    c.fd = -1;
    c.state = Conn::State::Closed;
}

void Loop::watch(Conn& c, bool out) {
    if (c.watching_out == out || c.fd < 0) return;
    epoll_event ev{};
    ev.events = out ? uint32_t(EPOLLIN | EPOLLOUT) : uint32_t(EPOLLIN);
    ev.data.ptr = &c;
    epoll_ctl(ep_, EPOLL_CTL_MOD, c.fd, &ev);
    c.watching_out = out;
}

void Loop::poll_once(uint64_t deadline_ns) {
    epoll_event events[512];
    uint64_t now = now_ns();
    int timeout_ms =
        deadline_ns > now ? int(std::min<uint64_t>((deadline_ns - now) / 1000000u + 1, 100)) : 0;
    int n = epoll_wait(ep_, events, 512, timeout_ms);
    for (int i = 0; i < n; ++i) on_event(*static_cast<Conn*>(events[i].data.ptr), events[i].events);
}

void Loop::on_event(Conn& c, uint32_t events) {
    if (c.state == Conn::State::Closed) return;
    if (c.state == Conn::State::Connecting) {
        int err = 0;
        socklen_t len = sizeof err;
        getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &err, &len);
        if (err != 0 || (events & (EPOLLERR | EPOLLHUP))) return fail(c, errors.connect);
        if (!(events & EPOLLOUT)) return;
        c.state = Conn::State::Handshaking;
        c.key = random_key();
        std::string req =
            "GET " + s_.path + " HTTP/1.1\r\nHost: " + s_.host + ":" + std::to_string(s_.port) +
            "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: " + c.key +
            request_tail_;
        send(c, req);
        return;
    }
    if ((events & EPOLLOUT) && c.out_off < c.out.size()) flush(c);
    if (!(events & (EPOLLIN | EPOLLHUP | EPOLLERR)) || c.fd < 0) return;
    ssize_t n = ::read(c.fd, buf_.data(), buf_.size());
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    if (n <= 0) {
        return fail(c, c.state == Conn::State::Open ? errors.closed : errors.connect);
    }
    if (c.state == Conn::State::Handshaking) {
        on_handshake_bytes(c, reinterpret_cast<const char*>(buf_.data()), size_t(n));
    } else {
        on_frame_bytes(c, buf_.data(), size_t(n));
    }
}

void Loop::on_handshake_bytes(Conn& c, const char* p, size_t n) {
    c.in.append(p, n);
    size_t end = c.in.find("\r\n\r\n");
    if (end == std::string::npos) {
        if (c.in.size() > 16384) fail(c, errors.handshake);
        return;
    }
    std::string head = c.in.substr(0, end + 2);
    std::string rest = c.in.substr(end + 4);
    std::string lower = head;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char ch) { return char(std::tolower(ch)); });
    std::string accept_lower = expected_accept(c.key);
    std::transform(accept_lower.begin(), accept_lower.end(), accept_lower.begin(),
                   [](unsigned char ch) { return char(std::tolower(ch)); });
    if (head.compare(0, 12, "HTTP/1.1 101") != 0 ||
        header_value(lower, "sec-websocket-accept") != accept_lower) {
        return fail(c, errors.handshake);
    }
    std::string ext = header_value(lower, "sec-websocket-extensions");
    c.deflate = ext.find("permessage-deflate") != std::string::npos;
    c.reset_inflate = ext.find("server_no_context_takeover") != std::string::npos;
    if (c.deflate) c.inflater = std::make_unique<Inflater>();
    c.in.clear();
    c.state = Conn::State::Open;
    --opening_;
    ++open_;
    handler_.on_open(c);
    if (!rest.empty() && c.state == Conn::State::Open) {
        on_frame_bytes(c, reinterpret_cast<const uint8_t*>(rest.data()), rest.size());
    }
}

void Loop::on_frame_bytes(Conn& c, const uint8_t* p, size_t n) {
    while (n > 0 && c.state == Conn::State::Open) {
        if (c.in_frame) {
            size_t take = size_t(std::min<uint64_t>(n, c.frame_left));
            frame_payload(c, p, take);
            p += take;
            n -= take;
            c.frame_left -= take;
            if (c.frame_left == 0) end_frame(c);
            continue;
        }
        // A head: parsed in place, or from the few bytes of it kept from the last read.
        HeadResult r;
        if (c.in.empty()) {
            r = parse_server_head(p, n, c.head);
            if (r == HeadResult::Incomplete) {
                c.in.assign(reinterpret_cast<const char*>(p), n);
                return;
            }
            if (r == HeadResult::Complete) {
                p += c.head.head_length;
                n -= c.head.head_length;
            }
        } else {
            size_t had = c.in.size();
            size_t add = std::min<size_t>(n, 14 - had);
            c.in.append(reinterpret_cast<const char*>(p), add);
            r = parse_server_head(reinterpret_cast<const uint8_t*>(c.in.data()), c.in.size(),
                                  c.head);
            if (r == HeadResult::Incomplete) {
                p += add;
                n -= add;
                continue;
            }
            if (r == HeadResult::Complete) {
                p += c.head.head_length - had;
                n -= c.head.head_length - had;
                c.in.clear();
            }
        }
        if (r == HeadResult::Invalid) return fail(c, errors.protocol);
        start_frame(c);
    }
}

void Loop::start_frame(Conn& c) {
    const FrameHead& h = c.head;
    c.in_frame = true;
    c.frame_left = h.length;
    if (h.opcode >= kClose) {
        if (!h.fin || h.length > 125) return fail(c, errors.protocol);
        c.control.clear();
    } else if (h.opcode == kCont) {
        if (!c.in_message) return fail(c, errors.protocol);
    } else {
        if (c.in_message) return fail(c, errors.protocol);
        c.in_message = true;
        c.msg_opcode = h.opcode;
        c.msg_rsv1 = h.rsv1;
        if (h.rsv1 && !c.deflate) return fail(c, errors.protocol);
        c.msg_len = 0;
        c.collecting = h.rsv1 || handler_.collect(c);
        c.body.clear();
    }
    if (c.frame_left == 0) end_frame(c);
}

void Loop::frame_payload(Conn& c, const uint8_t* p, size_t n) {
    if (c.head.opcode >= kClose) {
        c.control.append(reinterpret_cast<const char*>(p), n);
        return;
    }
    if (c.msg_len < sizeof c.prefix) {
        size_t k = std::min<size_t>(n, sizeof c.prefix - size_t(c.msg_len));
        std::copy(p, p + k, c.prefix + c.msg_len);
    }
    if (c.collecting) c.body.append(reinterpret_cast<const char*>(p), n);
    c.msg_len += n;
}

void Loop::end_frame(Conn& c) {
    c.in_frame = false;
    const uint8_t op = c.head.opcode;
    if (op == kPing) {
        send(c, masked_frame(kPong, c.control, c.mask));
        return;
    }
    if (op == kPong) return;
    if (op == kClose) return fail(c, errors.closed);
    if (!c.head.fin) return;
    c.in_message = false;
    Message m{c.msg_opcode, c.msg_len, {}, {}};
    if (c.msg_rsv1) {
        std::string plain;
        if (!c.inflater->inflate_message(c.body, plain, c.reset_inflate)) {
            return fail(c, errors.protocol);
        }
        c.body.swap(plain);
        m.length = c.body.size();
        std::copy_n(c.body.data(), std::min(c.body.size(), sizeof c.prefix), c.prefix);
    }
    m.prefix = std::string_view(reinterpret_cast<const char*>(c.prefix),
                                size_t(std::min<uint64_t>(m.length, sizeof c.prefix)));
    if (c.collecting) m.body = c.body;
    handler_.on_message(c, m);
}

void Loop::send(Conn& c, std::string_view bytes) {
    if (c.fd < 0) return;
    if (c.out_off < c.out.size()) {  // earlier bytes still wait: keep the order
        c.out.append(bytes);
        return;
    }
    ssize_t w = ::write(c.fd, bytes.data(), bytes.size());
    if (w < 0) {
        if (errno != EAGAIN && errno != EINTR) {
            return fail(c, c.state == Conn::State::Open ? errors.closed : errors.connect);
        }
        w = 0;
    }
    if (size_t(w) == bytes.size()) {
        watch(c, false);
        return;
    }
    c.out.assign(bytes.substr(size_t(w)));
    c.out_off = 0;
    watch(c, true);
}

void Loop::flush(Conn& c) {
    while (c.out_off < c.out.size()) {
        ssize_t w = ::write(c.fd, c.out.data() + c.out_off, c.out.size() - c.out_off);
        if (w < 0) {
            if (errno == EAGAIN || errno == EINTR) return watch(c, true);
            return fail(c, c.state == Conn::State::Open ? errors.closed : errors.connect);
        }
        c.out_off += size_t(w);
    }
    c.out.clear();
    c.out_off = 0;
    watch(c, false);
}

void Loop::close_all() {
    for (auto& c : conns_) {
        if (c->fd >= 0) ::close(c->fd);
        c->fd = -1;
        c->state = Conn::State::Closed;
    }
    open_ = 0;
}

}  // namespace wsload
