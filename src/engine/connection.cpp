#include "engine/connection.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "engine/io_thread.hpp"

namespace rivet::engine {

Connection::Connection(IoThread& owner, int fd, uint64_t id, const sockaddr_storage& peer)
    : owner_(owner), fd_(fd), id_(id) {
    peer_family_ = uint8_t(peer.ss_family);
    if (peer.ss_family == AF_INET)
        std::memcpy(peer_bytes_, &reinterpret_cast<const sockaddr_in&>(peer).sin_addr, 4);
    else if (peer.ss_family == AF_INET6)
        std::memcpy(peer_bytes_, &reinterpret_cast<const sockaddr_in6&>(peer).sin6_addr, 16);
    head_started_ms_ = owner_.loop().now_ms();
    interest_ = net::kReadable;
    owner_.loop().add(fd_, interest_, this);
    arm_timer();
}

Connection::~Connection() {
    owner_.loop().timers().cancel(*this);
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

Connection::Pending& Connection::pending() {
    if (!pending_) pending_ = std::make_unique<Pending>();
    return *pending_;
}

bool Connection::idle() const {
    return in_.empty() && out_.empty() &&
           (!pending_ || (pending_->slots.empty() && !sending_body()));
}

// ---- reading and parsing ----

void Connection::on_io(uint32_t events) {
    if (closed_) return;
    if (events & net::kHangup) {
        // Both directions are gone (reset, or our lingering shutdown met the client's close):
        // nothing can be sent any more.
        return close_now();
    }
    if (events & net::kWritable) flush();
    if (closed_) return;
    if (events & net::kReadable) on_readable();
}

void Connection::on_readable() {
    if (lingering_) {
        ssize_t n = read(fd_, owner_.read_buffer(), IoThread::kReadBufferSize);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) close_now();
        return;
    }
    if (reading_paused_ || peer_eof_) return;
    // What the read below learns about the socket holds only until this call returns.
    struct Forget {
        bool& drained;
        ~Forget() { drained = false; }
    } forget{input_drained_};

    // A short unfinished tail moves back into the shared buffer and the read lands behind it,
    // so the common case (a request split across two reads) costs one small copy and leaves the
    // connection without a buffer of its own. Only large pending bodies keep growing in_.
    ssize_t n;
    char* shared = owner_.read_buffer();
    bool into_shared = in_.size() <= kTailToShared;
    size_t tail = 0;
    if (into_shared) {
        tail = in_.size();
        if (tail > 0) {
            std::memcpy(shared, in_.data(), tail);
            std::string().swap(in_);
        }
        n = read(fd_, shared + tail, IoThread::kReadBufferSize - tail);
        input_drained_ = n >= 0 && size_t(n) < IoThread::kReadBufferSize - tail;
        if (n <= 0 && tail > 0) in_.assign(shared, tail);  // nothing new: keep what we had
    } else {
        size_t old = in_.size();
        in_.resize(old + IoThread::kReadBufferSize);
        n = read(fd_, in_.data() + old, IoThread::kReadBufferSize);
        input_drained_ = n >= 0 && size_t(n) < IoThread::kReadBufferSize;
        in_.resize(old + size_t(n > 0 ? n : 0));
    }
    if (n < 0) {
        if (errno != EAGAIN && errno != EINTR) close_now();
        return;
    }
    if (n == 0) {
        // The client sent all it will; answer what it asked, then close.
        peer_eof_ = true;
        // Half a request can never be finished now: unless answers are owed, close at once.
        if (out_.empty() && !owes()) return close_now();
        std::string().swap(in_);
        closing_ = true;
        update_interest();
        return;
    }

    LoopStats::bump(owner_.stats().bytes_in, uint64_t(n));
    if (into_shared) {
        size_t total = tail + size_t(n);
        size_t used = process(shared, total);
        if (closed_) return;
        if (used < total) {
            if (closing_) {
                discarded_input_ = true;
            } else {
                in_.assign(shared + used, total - used);
                // A new head's clock starts with its first byte; a fresh connection's runs
                // from the accept, so that one idle connection cannot wait twice as long.
                bool new_head = used > 0 || (tail == 0 && served_ > 0);
                if (new_head && !awaiting_body_) head_started_ms_ = owner_.loop().now_ms();
            }
        }
    } else {
        size_t used = process(in_.data(), in_.size());
        if (closed_) return;
        if (closing_ && used < in_.size()) discarded_input_ = true;
        if (closing_ || used == in_.size()) {
            std::string().swap(in_);  // an idle connection keeps no buffer
        } else if (used > 0) {
            in_.erase(0, used);
            if (!awaiting_body_) head_started_ms_ = owner_.loop().now_ms();
        }
    }
    flush();
}

size_t Connection::process(const char* data, size_t len) {
    size_t pos = 0;
    while (pos < len && !closing_ && !closed_) {
        if (should_pause()) {
            reading_paused_ = true;  // after_flush resumes with what is left in in_
            break;
        }
        size_t used = 0;
        if (!serve_one(data + pos, len - pos, used)) break;
        pos += used;
    }
    return pos;
}

bool Connection::serve_one(const char* data, size_t len, size_t& consumed) {
    http::RequestHead head;
    auto r = http::parse_request_head({data, len}, head, owner_.header_storage(),
                                      owner_.config().limits);
    awaiting_body_ = false;
    if (r.kind == http::ParseResult::Incomplete) return false;
    if (r.kind == http::ParseResult::Error) {
        fail(r.status, r.reason);
        return false;
    }
    size_t hb = r.head_bytes;
    switch (head.framing) {
        case http::BodyFraming::None:
            consumed = hb;
            dispatch(head, {});
            return true;
        case http::BodyFraming::ContentLength:
            if (len - hb < head.content_length) {
                awaiting_body_ = true;
                maybe_send_continue(head);
                return false;
            }
            consumed = hb + head.content_length;
            dispatch(head, {data + hb, head.content_length});
            return true;
        case http::BodyFraming::Chunked: {
            auto& p = pending();
            if (!p.chunked_active) {
                p.chunked = http::ChunkedDecoder(owner_.config().limits.max_body);
                p.chunked_body.clear();
                p.chunked_raw = 0;
                p.chunked_active = true;
            }
            auto fed = p.chunked.feed({data + hb + p.chunked_raw, len - hb - p.chunked_raw},
                                      p.chunked_body);
            if (fed.kind == http::ChunkedDecoder::Result::Error) {
                p.chunked_active = false;
                fail(fed.status, fed.reason);
                return false;
            }
            p.chunked_raw += fed.consumed;
            // The raw bytes stay buffered until the body is complete; extensions and tiny
            // chunks must not let them outgrow the body limit by much.
            if (p.chunked_raw > 2 * owner_.config().limits.max_body + 64 * 1024) {
                p.chunked_active = false;
                fail(413, "chunked framing too large for the body limit");
                return false;
            }
            if (fed.kind == http::ChunkedDecoder::Result::NeedMore) {
                awaiting_body_ = true;
                maybe_send_continue(head);
                return false;
            }
            p.chunked_active = false;
            consumed = hb + p.chunked_raw;
            std::string body = std::move(p.chunked_body);
            dispatch(head, body);
            return true;
        }
    }
    return false;
}

void Connection::maybe_send_continue(const http::RequestHead& head) {
    if (!head.expect_continue || continue_sent_ || head.version_minor == 0) return;
    if (pending_ && (!pending_->slots.empty() || sending_body())) {
        // An interim answer must not overtake the responses before it: after_flush sends it
        // once they are gone.
        continue_owed_ = true;
        return;
    }
    continue_sent_ = true;
    output().append("HTTP/1.1 100 Continue\r\n\r\n");
}

void Connection::dispatch(const http::RequestHead& head, std::string_view body) {
    ++served_;
    LoopStats::bump(owner_.stats().requests);
    continue_sent_ = false;
    continue_owed_ = false;
    Exchange exchange(*this, head, body);
    try {
        owner_.app().serve(exchange);
    } catch (...) {
        if (!exchange.answered()) exchange.respond_simple(500, "Internal Server Error\n");
        return;
    }
    if (!exchange.answered()) exchange.respond_simple(500, "the handler sent no response\n");
}

void Connection::fail(int status, const char* reason) {
    owner_.app().on_protocol_error(owner_.index(), peer_ip(), status);
    http::Framing framing{false, false, 1};
    std::string body = std::to_string(status) + " " + std::string(http::status_reason(status)) +
                       ": " + reason + "\n";
    std::string bytes;
    http::write_simple_response(bytes, status, body, framing, owner_.date_block());
    emit(bytes, framing);
}

// ---- answering, in order ----

http::Framing Connection::framing_for(const http::RequestHead& head, bool close_requested) {
    const auto& cfg = owner_.config();
    bool keep = head.keep_alive && !close_requested && !owner_.draining() &&
                !(cfg.max_requests_per_connection && served_ >= cfg.max_requests_per_connection);
    return {head.method == http::Method::Head, keep, head.version_minor};
}

std::string& Connection::output() {
    return out_.empty() ? owner_.write_buffer() : out_;
}

bool Connection::should_pause() const {
    // Answers made in this read sit in the loop's write buffer until the flush: they count.
    size_t unsent = out_.empty() ? owner_.write_buffer().size() : out_.size() - out_sent_;
    if (unsent > owner_.config().output_high_water) return true;
    return sending_body() || (pending_ && pending_->slots.size() >= owner_.config().max_pipelined);
}

bool Connection::in_order() const {
    return !owes();
}

void Connection::emit(std::string_view bytes, const http::Framing& framing) {
    if (!framing.keep_alive) closing_ = true;
    if (in_order()) {
        output().append(bytes);
        return;
    }
    auto& p = pending();
    p.slots.push_back({p.next_sequence++, true, framing, std::nullopt, std::string(bytes)});
}

bool Connection::write_out(const http::Response& response, http::Framing framing) {
    if (response.close_connection()) framing.keep_alive = false;
    bool streamed = response.producer() && !framing.head_only && response.status() >= 200 &&
                    response.status() != 204 && response.status() != 304;
    if (streamed && framing.version_minor == 0) framing.keep_alive = false;  // ends at close
    http::write_response(output(), response, framing, owner_.date_block());
    const http::FileRange* file = response.file_range();
    bool has_body = !framing.head_only && response.status() >= 200 && response.status() != 204 &&
                    response.status() != 304;
    if (streamed) {
        start_stream(response.producer(), framing);
    } else if (file && has_body && file->length > 0) {
        auto& p = pending();
        p.file = *file;
        p.body_ends_connection = !framing.keep_alive;
    } else if (!framing.keep_alive) {
        closing_ = true;
    }
    return !framing.keep_alive;
}

void Connection::respond(const http::RequestHead& head, const http::Response& response) {
    auto framing = framing_for(head, response.close_connection());
    if (in_order()) {
        // The hot path: serialized straight into the output, no intermediate string.
        write_out(response, framing);
        return;
    }
    if (!framing.keep_alive) closing_ = true;
    auto& p = pending();
    p.slots.push_back({p.next_sequence++, true, framing, response, {}});
}

void Connection::respond_simple(const http::RequestHead& head, int status, std::string_view body,
                                std::string_view extra_fields) {
    auto framing = framing_for(head, false);
    if (in_order()) {
        http::write_simple_response(output(), status, body, framing, owner_.date_block(),
                                    extra_fields);
        if (!framing.keep_alive) closing_ = true;
        return;
    }
    std::string bytes;
    http::write_simple_response(bytes, status, body, framing, owner_.date_block(), extra_fields);
    emit(bytes, framing);
}

Deferred Connection::defer(const http::RequestHead& head) {
    auto& p = pending();
    auto framing = framing_for(head, false);
    p.slots.push_back({p.next_sequence, false, framing, std::nullopt, {}});
    if (!framing.keep_alive) closing_ = true;
    Deferred d;
    d.thread_ = &owner_;
    d.fd_ = fd_;
    d.connection_id_ = id_;
    d.sequence_ = p.next_sequence++;
    return d;
}

void Connection::complete(uint64_t sequence, http::Response&& response) {
    if (!pending_) return;
    for (auto& slot : pending_->slots) {
        if (slot.sequence != sequence || slot.ready) continue;
        if (response.close_connection()) closing_ = true;  // read no further requests
        slot.response = std::move(response);
        slot.ready = true;
        break;
    }
    release_ready_slots();
    flush();
}

// Sends the answers at the front of the queue that are ready, in order. They are serialized
// only now, so that the last one of a drain can still say "Connection: close".
void Connection::release_ready_slots() {
    auto& p = *pending_;
    while (!p.slots.empty() && p.slots.front().ready && !sending_body()) {
        Slot slot = std::move(p.slots.front());
        p.slots.pop_front();
        http::Framing framing = slot.framing;
        if (owner_.draining() && p.slots.empty() && in_.empty()) framing.keep_alive = false;
        bool ends;
        if (slot.response) {
            ends = write_out(*slot.response, framing);
        } else {
            output().append(slot.bytes);
            ends = !framing.keep_alive;
        }
        if (ends) {
            closing_ = true;
            p.slots.clear();  // nothing after a response that ends the connection is sent
        }
    }
}

void Connection::start_stream(std::shared_ptr<http::BodyProducer> stream,
                              const http::Framing& framing) {
    auto& p = pending();
    p.stream = std::move(stream);
    p.stream_chunked = framing.version_minor >= 1;
    p.body_ends_connection = !framing.keep_alive;
}

// Pulls streamed body pieces until the output is comfortably full or the stream ends.
void Connection::pump_stream() {
    auto& p = *pending_;
    while (p.stream && output().size() < 256 * 1024) {
        std::string piece;
        bool more = (*p.stream)(piece);
        if (p.stream_chunked)
            http::append_chunk(output(), piece);
        else
            output().append(piece);
        if (more) continue;
        if (p.stream_chunked) http::append_last_chunk(output());
        p.stream.reset();
        if (p.body_ends_connection) closing_ = true;
        release_ready_slots();
    }
}

}  // namespace rivet::engine
