#include "engine/exchange.hpp"

#include "engine/connection.hpp"
#include "engine/io_thread.hpp"

namespace rivet::engine {

namespace {

// The answer of a Deferred dropped without one, so that its connection never waits forever.
Reply internal_error() {
    Reply r;
    r.status = 500;
    r.content_type = "text/plain; charset=utf-8";
    r.body = "Internal Server Error\n";
    return r;
}

}  // namespace

std::string Exchange::peer_address() const {
    return responder_.connection().peer_address();
}
PeerIp Exchange::peer_ip() const {
    return responder_.connection().peer_ip();
}

TlsFacts Exchange::tls() const {
    return responder_.connection().tls_facts();
}

void Exchange::respond(const ReplyView& reply) {
    if (answered_) return;
    answered_ = true;
    status_ = reply.head.status;
    body_bytes_ = reply.head.body_kind == http::ResponseHead::Body::Sized ? reply.file.length
                                                                          : reply.head.body.size();
    responder_.answer(&head_, {Answer::Kind::Reply, &reply});
}

void Exchange::respond_simple(int status, std::string_view body, std::string_view extra_fields) {
    if (answered_) return;
    answered_ = true;
    status_ = status;
    body_bytes_ = body.size();
    responder_.answer(&head_, {Answer::Kind::Simple, nullptr, status, body, extra_fields});
}

Deferred Exchange::defer() {
    if (answered_) return {};  // one answer per request; an empty Deferred completes nothing
    answered_ = true;
    return responder_.answer(&head_, {Answer::Kind::Later});
}

Deferred& Deferred::operator=(Deferred&& other) noexcept {
    if (this != &other) {
        if (valid()) {
            complete(internal_error());
        }
        thread_ = other.thread_;
        state_ = std::move(other.state_);
        fd_ = other.fd_;
        connection_id_ = other.connection_id_;
        sequence_ = other.sequence_;
        other.thread_ = nullptr;
    }
    return *this;
}

void Deferred::abandon() {
    complete(internal_error());
}

void Deferred::on_cancel(std::function<void()> fn) {
    if (state_) state_->on_cancel = std::move(fn);
}

bool Deferred::cancelled() const {
    return state_ && state_->outcome.load(std::memory_order_acquire) == DeferredState::kCancelled;
}

void Deferred::complete(Reply&& reply) {
    if (!thread_) return;
    IoThread* thread = thread_;
    thread_ = nullptr;
    // The connection is gone (its cancel won): nothing to deliver, and nothing to wake.
    if (!state_->settle(DeferredState::kCompleted)) return;
    thread->stats().deferred_completed.fetch_add(1, std::memory_order_relaxed);
    // On the loop already (a worker's answer arrives through one posted task, a coroutine
    // resumes from a timer): one hop is enough.
    if (thread->can_deliver_in_place())
        return thread->deliver(fd_, connection_id_, sequence_, std::move(reply));
    thread->loop().post(
        [thread, fd = fd_, id = connection_id_, seq = sequence_, r = std::move(reply)]() mutable {
            thread->deliver(fd, id, seq, std::move(r));
        });
}

}  // namespace rivet::engine
