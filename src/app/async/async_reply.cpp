// rivet::AsyncReply over the request's Deferred: send() posts the answer to the loop, where
// App's after-path (middleware, logs, metrics) runs before the Deferred completes.
#include <rivet/async_reply.hpp>

#include <mutex>
#include <optional>
#include <stdexcept>

#include "app/async/async_call.hpp"

namespace rivet {

struct AsyncReply::State : app::AsyncCall {
    app::AsyncAnswers* answers = nullptr;
    const EventLoop* event_loop = nullptr;

    std::mutex mu;  // guards what follows (send and cancel may come from different threads)
    bool sent = false;
    bool dropped = false;  // "sent" by the reply's destructor: an exception may still explain it
    bool cancelled = false;
    std::function<void()> on_cancel;

    // Runs on the loop: the answer, a dropped reply's 500 or the handler's exception.
    static void answer_on_loop(std::shared_ptr<State> s, std::optional<Response> res) {
        s->event_loop->post([s = std::move(s), r = std::move(res)]() mutable {
            if (r && !s->error) {
                // The response sent replaces the one before() worked on, whose fields it gets.
                Response before = std::move(*s->response);
                s->response.emplace(std::move(*r));
                for (size_t i = 0; i < s->kept_fields && i < before.headers().size(); ++i)
                    s->response->header(before.headers()[i].name, before.headers()[i].value);
                s->kept_fields = 0;
            }
            s->answers->answer(*s, nullptr);
        });
    }
};

namespace detail {

struct ReplyAccess {
    static AsyncReply make(std::shared_ptr<AsyncReply::State> s) {
        return AsyncReply(std::move(s));
    }
};

}  // namespace detail

AsyncReply& AsyncReply::operator=(AsyncReply&& other) noexcept {
    if (this != &other) {
        AsyncReply dropped(std::move(*this));  // answers 500 if it was not sent
        state_ = std::move(other.state_);
    }
    return *this;
}

AsyncReply::~AsyncReply() {
    if (!state_) return;
    {
        std::lock_guard lock(state_->mu);
        if (state_->sent || state_->cancelled) return;
        state_->sent = state_->dropped = true;
    }
    Response res(500);
    res.text("Internal Server Error: the handler dropped its reply without sending\n");
    State::answer_on_loop(std::move(state_), std::move(res));
}

void AsyncReply::send(Response res) {
    if (!state_) throw std::logic_error("rivet: send() on a moved-from AsyncReply");
    {
        std::lock_guard lock(state_->mu);
        if (state_->sent) throw std::logic_error("rivet: AsyncReply::send() called twice");
        state_->sent = true;
        if (state_->cancelled) return;  // nobody to tell
    }
    // The after-path runs on the loop; the state (request, trace) travels with the task.
    State::answer_on_loop(state_, std::move(res));
}

bool AsyncReply::cancelled() const {
    std::lock_guard lock(state_->mu);
    return state_->cancelled;
}

bool AsyncReply::sent() const {
    std::lock_guard lock(state_->mu);
    return state_->sent;
}

void AsyncReply::on_cancel(std::function<void()> fn) {
    std::unique_lock lock(state_->mu);
    if (!state_->cancelled) {
        state_->on_cancel = std::move(fn);
        return;
    }
    lock.unlock();
    if (fn) state_->event_loop->post(std::move(fn));
}

const Request& AsyncReply::request() const {
    return *state_->request;
}

namespace app {

void run_async_reply(const AsyncReplyHandler& handler, engine::Exchange& ex, const Request& req,
                     Response&& res, MiddlewareChain::Slice& slice, size_t kept_fields,
                     const Operations::Trace& trace, AsyncAnswers& answers, EventLoop& loop) {
    auto state = std::make_shared<AsyncReply::State>();
    state->request.emplace(req.detach());
    state->response.emplace(std::move(res));
    state->slice = &slice;
    state->keep_slice();
    state->kept_fields = kept_fields;
    state->trace = trace;
    state->event_loop = &loop;
    state->answers = &answers;
    state->loop = ex.loop_index();
    answers.waiting(*state, ex);
    state->later = ex.defer();
    std::weak_ptr<AsyncReply::State> weak = state;
    state->later.on_cancel([weak] {
        auto s = weak.lock();
        if (!s) return;  // answered and gone already
        std::function<void()> hook;
        {
            std::lock_guard lock(s->mu);
            if (s->sent) return;  // its answer is on the way to a closed connection
            s->cancelled = true;
            hook = std::move(s->on_cancel);
        }
        s->answers->cancelled(*s);
        if (hook) hook();
    });
    Request& r = *state->request;
    try {
        handler(r, detail::ReplyAccess::make(state));
    } catch (...) {
        // The exception is the answer unless the handler sent one. The reply was destroyed by
        // the throw and posted its 500, which runs after this and finds the error instead.
        std::unique_lock lock(state->mu);
        if (state->sent && !state->dropped) return;  // sent before it threw: that stands
        state->error = std::current_exception();
        if (state->sent) return;
        state->sent = true;  // the reply lives on elsewhere; its send() will be refused
        lock.unlock();
        AsyncReply::State::answer_on_loop(state, std::nullopt);
    }
}

}  // namespace app

}  // namespace rivet
