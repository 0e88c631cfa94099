// A coroutine handler's run: its root state (rivet::detail::RootState), recycled per thread.
#include <memory>
#include <vector>

#include <rivet/async.hpp>

#include "app/async/async_call.hpp"

namespace rivet::app {

namespace {

class CoroutineCall;
void release(CoroutineCall* call);

class CoroutineCall final : public detail::RootState, public AsyncCall {
public:
    enum class Stage : uint8_t { FirstRun, Done, Waiting };

    void start(const CoroutineHandler& handler, engine::Exchange& ex, AsyncAnswers& answers) {
        answers_ = &answers;
        stage_ = Stage::FirstRun;
        Task<> task;
        try {
            task = handler(*request, *response);  // only makes the frame (initial suspend)
        } catch (...) {
            error = std::current_exception();
            answers.answer(*this, &ex);
            return release(this);
        }
        h_ = detail::TaskAccess::release(task);
        if (!h_) {  // a default-constructed Task: nothing ran, nothing to wait for
            answers.answer(*this, &ex);
            return release(this);
        }
        h_.promise().set_root(this);
        h_.resume();
        if (stage_ == Stage::Done) {  // ended without waiting: the plain handler's path
            answers.answer(*this, &ex);
            return release(this);
        }
        on_suspend();  // an awaitable of another library did not say so: copy the request now
        stage_ = Stage::Waiting;
        answers.waiting(*this, ex);
        later = ex.defer();
        later.on_cancel([this] { cancel(); });
    }

    void on_suspend() override {
        if (detached_) return;
        // In place, so the handler's `Request&` stays valid; views into the connection's
        // buffer die with this dispatch.
        request = request->detach();
        keep_slice();
        detached_ = true;
    }

    std::coroutine_handle<> on_done() override {
        error = h_.promise().error();
        h_.destroy();  // inside its final suspension: allowed, and nothing touches it after
        h_ = {};
        if (stage_ == Stage::FirstRun) {
            stage_ = Stage::Done;  // start() answers through the Exchange
            return std::noop_coroutine();
        }
        answers_->answer(*this, nullptr);
        release(this);
        return std::noop_coroutine();
    }

    void on_work_ended_after_cancel() override { destroy_and_release(); }

    void reset() {
        request.reset();
        response.reset();
        if (later.valid()) later = engine::Deferred();  // never on the path that did not wait
        error = nullptr;
        work = nullptr;
        doomed = false;
        detached_ = false;
    }

private:
    // The client went away while the coroutine waited (on the loop, from the Deferred).
    void cancel() {
        answers_->cancelled(*this);
        // A job still queued is dropped: nobody waits for its result.
        if (work && !detail::withdraw_work(*work)) {
            doomed = true;  // a worker may be using the frame: destroyed when its job ends
            return;
        }
        destroy_and_release();
    }

    void destroy_and_release() {
        auto h = std::exchange(h_, {});
        h.destroy();  // locals and awaiters go: timers and watches are removed
        release(this);
    }

    AsyncAnswers* answers_ = nullptr;
    std::coroutine_handle<detail::Promise<void>> h_;
    Stage stage_ = Stage::FirstRun;
    bool detached_ = false;
};

// Calls are recycled per thread (a handful in flight per loop is typical): the hot path
// allocates only the coroutine frame.
struct Spares {
    std::vector<std::unique_ptr<CoroutineCall>> calls;
};
thread_local Spares t_spares;
constexpr size_t kMaxSpares = 256;

CoroutineCall* take() {
    auto& spares = t_spares.calls;
    if (spares.empty()) return new CoroutineCall;
    CoroutineCall* c = spares.back().release();
    spares.pop_back();
    return c;
}

void release(CoroutineCall* call) {
    call->reset();
    if (t_spares.calls.size() < kMaxSpares)
        t_spares.calls.emplace_back(call);
    else
        delete call;
}

}  // namespace

void run_coroutine(const CoroutineHandler& handler, engine::Exchange& ex, Request&& req,
                   Response&& res, MiddlewareChain::Slice& slice, size_t kept_fields,
                   const Operations::Trace& trace, AsyncAnswers& answers) {
    CoroutineCall* call = take();
    call->request.emplace(std::move(req));
    call->response.emplace(std::move(res));
    call->slice = &slice;
    call->kept_fields = kept_fields;
    call->trace = trace;
    call->loop = ex.loop_index();
    call->start(handler, ex, answers);
}

}  // namespace rivet::app
