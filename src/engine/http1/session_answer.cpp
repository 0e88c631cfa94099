// Http1Session, the answering side: every answer, in request order, into the output.
#include "engine/http1/session.hpp"
#include "engine/io_thread.hpp"

namespace rivet::engine {

namespace {

constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";

}  // namespace

Http1Session::Pending& Http1Session::pending() {
    if (!pending_) pending_ = std::make_unique<Pending>();
    return *pending_;
}

std::string& Http1Session::output() {
    return out_.empty() ? owner_.write_buffer() : out_;
}

http::Framing Http1Session::framing_for(const http::RequestHead& head, bool close_requested,
                                        bool switching) const {
    const auto& limits = owner_.config().limits;
    // A hand-off (a 101) ends HTTP/1.1 on the connection whatever the server's own reasons to
    // end it (the lame duck, the requests a connection may make): the next protocol has its own
    // way to end. Only the client's "close" (or the handler's) stops it.
    bool keep = head.keep_alive && !close_requested &&
                (switching || (!(owner_.winding_down() && !input_follows_) &&
                               !(limits.max_requests_per_connection &&
                                 conn_.requests_served() >= limits.max_requests_per_connection)));
    return {head.method == http::Method::Head, keep, head.version_minor};
}

Deferred Http1Session::answer(const http::RequestHead* head, const Answer& a) {
    switch (a.kind) {
        case Answer::Kind::Reply:
            // An answer before the streamed body ended: the rest of it is not read (the close
            // lingers).
            enqueue(a, framing_for(*head, a.reply->close || upload_open_for(*head),
                                   bool(a.reply->then)));
            return {};
        case Answer::Kind::Simple:
            enqueue(a, framing_for(*head, upload_open_for(*head)));
            return {};
        case Answer::Kind::Later:
            return defer(*head);
        case Answer::Kind::Refusal:
            refuse_in_order(a);
            return {};
    }
    return {};
}

Deferred Http1Session::defer(const http::RequestHead& head) {
    Deferred d;
    d.thread_ = &owner_;
    d.fd_ = conn_.fd();
    d.connection_id_ = conn_.id();
    d.sequence_ = enqueue({Answer::Kind::Later}, framing_for(head, false));
    d.state_ = std::make_shared<DeferredState>();
    pending_->slots.back().deferred = d.state_;
    if (upload_open_for(head)) upload_->answer_slot = d.sequence_;
    return d;
}

// The one path of every answer: into the output now when nothing before it is owed, else into
// the queue, where it waits for the answers before it. Returns the queued slot's sequence.
uint64_t Http1Session::enqueue(const Answer& a, const http::Framing& framing) {
    if (!framing.keep_alive) {
        // Nothing after this request will be read. A deferred answer to a request whose body
        // is still streaming (phase Stream is always the request being dispatched) lets that
        // body be read to its end first: the handler is reading it (Connection: close, HTTP/1.0,
        // the last request allowed, the lame duck).
        if (a.kind == Answer::Kind::Later && phase_ == Phase::Stream)
            after_upload_ = Phase::Closing;
        else
            end_reading();
    }
    if (a.kind == Answer::Kind::Reply && a.reply->then && framing.keep_alive) {
        // A hand-off: what follows the request is the next protocol's, even while this answer
        // waits for earlier ones. (A deferred answer that hands off cannot stop the reading
        // this way: its client must wait for the answer before it sends more, as WebSocket and
        // h2c clients do.)
        end_reading();
        phase_ = Phase::Switching;
    }
    if (a.kind != Answer::Kind::Later && !owes()) {
        // The hot path: serialized straight into the output, no intermediate copy.
        write_now(a, framing);
        return 0;
    }
    auto& p = pending();
    Slot slot{p.next_sequence++, a.kind != Answer::Kind::Later, framing, std::nullopt, {}, {}};
    if (a.kind == Answer::Kind::Reply)
        slot.reply = Reply::copy_of(*a.reply);
    else if (a.kind == Answer::Kind::Simple)
        http::write_simple_response(slot.bytes, a.status, a.body, framing, owner_.date_block(),
                                    a.extra_fields);
    p.slots.push_back(std::move(slot));
    return p.slots.back().sequence;
}

void Http1Session::write_now(const Answer& a, const http::Framing& framing) {
    if (a.kind == Answer::Kind::Reply) {
        write_out(*a.reply, framing);
    } else {
        http::write_simple_response(output(), a.status, a.body, framing, owner_.date_block(),
                                    a.extra_fields);
    }
}

bool Http1Session::write_out(const ReplyView& reply, http::Framing framing) {
    using Body = http::ResponseHead::Body;
    if (reply.close) framing.keep_alive = false;
    const bool has_body = !framing.head_only && http::status_has_body(reply.head.status);
    const bool streamed = reply.head.body_kind == Body::Streamed && has_body;
    if (streamed && framing.version_minor == 0) framing.keep_alive = false;  // ends at close
    const http::ResponseHead* head = &reply.head;
    http::ResponseHead with_trailers;  // only answers with trailers pay for the copy
    if (reply.trailers) {
        with_trailers = reply.head;
        with_trailers.trailers = &reply.trailers->fields;
        head = &with_trailers;
    }
    // Trailers go in the last chunk; HTTP/1.0 (no chunked coding) and answers without a body
    // drop them.
    const bool chunked = has_body && http::chunked_body(*head, framing);
    http::write_response(output(), *head, framing, owner_.date_block());
    if (reply.then && framing.keep_alive) {
        // Another protocol takes the connection once this answer has left; nothing after the
        // request is read as HTTP/1.1 (after_flush switches).
        end_reading();
        phase_ = Phase::Switching;
        pending().then = reply.then;
        return true;
    }
    if (streamed) {
        auto& p = pending();
        start_stream(reply.stream);
        p.stream_chunked = chunked;
        if (chunked) p.trailers = reply.trailers;
        p.body_ends_connection = !framing.keep_alive;
    } else if (reply.head.body_kind == Body::Sized && has_body && reply.file.length > 0) {
        auto& p = pending();
        p.file = reply.file;
        if (chunked) p.trailers = reply.trailers;  // after the file's one chunk
        p.body_ends_connection = !framing.keep_alive;
    } else if (!framing.keep_alive) {
        end_reading();
    }
    return !framing.keep_alive;
}

void Http1Session::fail(int status, const char* reason, const http::RequestHead* head,
                        uint64_t slot, unsigned retry_after_s) {
    auto& app = owner_.app();
    const PeerIp peer = conn_.peer_ip();
    app.on_protocol_error(owner_.index(), peer, status);
    ErrorReply reply(*this, slot);
    try {
        app.answer_protocol_error({status, reason, head, owner_.index(), peer, retry_after_s},
                                  reply);
    } catch (...) {
        // the engine's own answer below
    }
    if (reply.answered()) return;
    std::string body = std::to_string(status) + " " + std::string(http::status_reason(status)) +
                       ": " + reason + "\n";
    const std::string fields =
        retry_after_s ? "Retry-After: " + std::to_string(retry_after_s) + "\r\n" : std::string();
    answer(nullptr, {Answer::Kind::Refusal, nullptr, status, body, fields, slot});
}

void ErrorReply::respond(const ReplyView& reply) {
    if (answered_) return;
    answered_ = true;
    responder_.answer(nullptr, {Answer::Kind::Refusal, &reply, reply.head.status, {}, {}, slot_});
}

// A refusal's answer, always the connection's last: a new one, or in place of the streamed
// request's deferred answer (which then finds its slot taken and is dropped).
void Http1Session::refuse_in_order(const Answer& a) {
    const http::Framing framing{false, false, 1};
    if (a.slot && pending_) {
        for (auto& s : pending_->slots) {
            if (s.sequence != a.slot) continue;
            s.ready = true;
            s.framing = framing;
            s.bytes.clear();
            s.reply.reset();
            if (a.reply)
                s.reply = Reply::copy_of(*a.reply);
            else
                http::write_simple_response(s.bytes, a.status, a.body, framing, owner_.date_block(),
                                            a.extra_fields);
            end_reading();
            release_ready_slots();
            return;
        }
    }
    enqueue({a.reply ? Answer::Kind::Reply : Answer::Kind::Simple, a.reply, a.status, a.body,
             a.extra_fields},
            framing);
}

void Http1Session::complete(uint64_t sequence, Reply&& reply) {
    // Lingering: everything that could still be sent has been (an answer that ended the
    // connection dropped the slots after it), so a late answer has nowhere to go.
    if (!pending_ || phase_ == Phase::Lingering) return;
    for (auto& slot : pending_->slots) {
        if (slot.sequence != sequence || slot.ready) continue;
        if (reply.close) end_reading();  // read no further requests
        slot.reply = std::move(reply);
        slot.ready = true;
        break;
    }
    release_ready_slots();
    flush();
}

// Sends the answers at the front of the queue that are ready, in order. They are serialized
// only now, so that the last one of a drain can still say "Connection: close".
void Http1Session::release_ready_slots() {
    auto& p = *pending_;
    while (!p.slots.empty() && p.slots.front().ready && !sending_body()) {
        Slot slot = std::move(p.slots.front());
        p.slots.pop_front();
        http::Framing framing = slot.framing;
        if (owner_.winding_down() && p.slots.empty() && in_.empty()) framing.keep_alive = false;
        // The streamed request's answer, before its body ended: the rest is not read.
        if (upload_ && slot.sequence == upload_->answer_slot) framing.keep_alive = false;
        bool ends;
        if (slot.reply) {
            ends = write_out(slot.reply->view(), framing);
        } else {
            output().append(slot.bytes);
            ends = !framing.keep_alive;
        }
        if (ends) {
            end_reading();
            p.slots.clear();  // nothing after an answer that ends the connection is sent
        }
    }
}

bool Http1Session::awaits_deferred() const {
    if (!pending_) return false;
    for (const auto& slot : pending_->slots)
        if (!slot.ready && slot.deferred) return true;
    return false;
}

// The connection is closed: whoever still owes an answer learns it, once. Runs after the close,
// so a callback that completes or drops its Deferred finds a decided state and does nothing.
void Http1Session::cancel_deferred() {
    if (!pending_) return;
    std::vector<std::shared_ptr<DeferredState>> cancelled;
    for (auto& slot : pending_->slots)
        if (!slot.ready && slot.deferred && slot.deferred->settle(DeferredState::kCancelled))
            cancelled.push_back(std::move(slot.deferred));
    pending_->slots.clear();
    for (auto& state : cancelled) {
        LoopStats::bump(owner_.stats().cancelled);
        if (auto fn = std::move(state->on_cancel)) fn();
    }
}

void Http1Session::send_continue() {
    output().append(kContinue);
}

// Pulls streamed body pieces until the output is comfortably full, the producer waits or the
// stream ends.
void Http1Session::pump_stream() {
    auto& p = *pending_;
    p.stream_waiting = false;
    while (p.stream && output().size() < 256 * 1024) {
        std::string piece;
        const Produced made = (*p.stream)(piece, p.waker);
        if (p.stream_chunked)
            http::append_chunk(output(), piece);
        else
            output().append(piece);
        if (made == Produced::More) continue;
        // Waiting during a drain ends the stream: nothing else is owed on this connection,
        // and it must not hold the drain (its client sees the end of the body).
        if (made == Produced::Waiting && !owner_.draining()) {
            // A wake that raced with the producer's answer: it may have something now.
            if (p.waker.link()->woken.exchange(false, std::memory_order_acq_rel)) continue;
            p.stream_waiting = true;
            return;
        }
        finish_stream(made == Produced::Done);
    }
}

void Http1Session::start_stream(std::shared_ptr<StreamProducer> producer) {
    auto& p = pending();
    p.stream = std::move(producer);
    p.waker = StreamWaker(std::make_shared<StreamLink>());
    open_link(*p.waker.link(), owner_, conn_.fd(), conn_.id());
    p.stream_waiting = false;
    p.input_behind_stream = false;
}

void Http1Session::finish_stream(bool complete) {
    auto& p = *pending_;
    if (p.stream_chunked) {
        // The producer said Done: its trailers are final now (it may have set them on that
        // call). A stream cut short gets none, so a client that needs them sees it was cut.
        if (complete && p.trailers)
            http::append_last_chunk(output(), p.trailers->fields);
        else
            http::append_last_chunk(output());
    }
    drop_stream();
    if (p.body_ends_connection) end_reading();
    release_ready_slots();
}

void Http1Session::drop_stream() {
    auto& p = *pending_;
    if (p.waker.link()) close_link(*p.waker.link());
    p.waker = {};
    p.trailers.reset();
    p.stream_waiting = false;
    p.input_behind_stream = false;
    // Last: the producer's destructor may be the stream's owner learning that it ended.
    std::shared_ptr<StreamProducer> gone = std::move(p.stream);
}

Http1Session::Pending::~Pending() {
    if (waker.link()) close_link(*waker.link());
}

// A waker resumed the stream: pump it again, unless it is pumping already (it then sees the
// wake when it next says Waiting) or it is not this session's current stream.
void Http1Session::resume_stream(const StreamLink* link) {
    if (phase_ == Phase::Closed || !pending_ || !pending_->stream ||
        pending_->waker.link().get() != link)
        return;
    if (link->aborted.load(std::memory_order_acquire)) return close_now();
    if (!pending_->stream_waiting) return;
    pending_->waker.link()->woken.store(false, std::memory_order_release);
    pending_->stream_waiting = false;
    flush();
}

// A stream waits and its connection reads nothing: the one thing watched is the client leaving.
void Http1Session::watch_peer_while_waiting() {
    if (conn_.transport().unread_in_socket() == 0) {
        // Readable with nothing to read: the client's FIN (a reset is a hang-up). Nothing it
        // could be sent will be read: end the stream now, not at the next piece's failed write.
        peer_eof_ = true;
        return close_now();
    }
    // A request behind the stream: it waits in the socket until the stream ends.
    pending_->input_behind_stream = true;
    update_interest();
}

}  // namespace rivet::engine
