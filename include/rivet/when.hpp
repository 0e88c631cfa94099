// Several waits at once, and a deadline around one: when_all, when_any, with_timeout.
//
//   auto [user, orders] = co_await rivet::when_all(load_user(id), load_orders(id));
//   auto first = co_await rivet::when_any(ask(primary), ask(replica));   // std::variant
//   auto body = co_await rivet::with_timeout(client.get(url), 2s);       // or TimeoutError (504)
//
// The tasks run concurrently on the awaiting coroutine's loop (interleaved at their
// suspensions, never on two threads). A task that is no longer wanted is cancelled the way a
// handler is when its client leaves: its frame is destroyed at its current suspension, so its
// timers, watches and Completions are withdrawn (rivet/async.hpp, rivet/completion.hpp). That
// happens to the other tasks when when_all's first one throws, to the losers of when_any, to
// what with_timeout wraps at its deadline, and to all of them when the awaiting coroutine is
// itself cancelled. A cancelled task that waits for rivet::on_workers keeps its own frame until
// the job ends (the job may use it); it is never resumed.
#pragma once

#include <chrono>
#include <coroutine>
#include <cstddef>
#include <exception>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include <rivet/async.hpp>
#include <rivet/http_error.hpp>
#include <rivet/task.hpp>

namespace rivet {

// with_timeout's deadline passed. An HttpError: a handler that lets it through answers 504.
class TimeoutError : public HttpError {
public:
    explicit TimeoutError(std::string what = "Gateway Timeout: an operation took too long")
        : HttpError(504, std::move(what)) {}
};

namespace detail {

template <class T>
using Result = std::conditional_t<std::is_void_v<T>, std::monostate, T>;

class Group;

// One task of a group: the root of its coroutine (it forwards on_suspend to the awaiting
// coroutine's root, so the request is detached before anything waits) and its owner.
class Branch final : public RootState {
public:
    Branch(Group& group, size_t index, std::coroutine_handle<> frame, PromiseBase& promise)
        : group_(&group), frame_(frame), promise_(&promise), index_(index) {
        promise.set_root(this);
    }

    void on_suspend() override {
        if (parent_) parent_->on_suspend();
    }
    std::coroutine_handle<> on_done() override;
    void on_work_ended_after_cancel() override { destroy(); }

    // `parent`: the awaiting coroutine's root, known only once it awaits.
    void start(RootState* parent) {
        parent_ = parent;
        frame_.resume();
    }
    bool finished() const { return frame_.done(); }
    PromiseBase& promise() const { return *promise_; }
    std::coroutine_handle<> frame() const { return frame_; }
    // Not wanted any more: gone now, or (an on_workers job running) once the job ends.
    void cancel() {
        if (work) {
            doomed = true;  // the job's end calls on_work_ended_after_cancel
            return;
        }
        destroy();
    }

private:
    void destroy() {
        frame_.destroy();
        delete this;
    }
    Group* group_;
    RootState* parent_ = nullptr;
    std::coroutine_handle<> frame_;
    PromiseBase* promise_;
    size_t index_;
};

// What when_all and when_any share: the branches, who is done, and when to wake the awaiter.
class Group {
public:
    enum class Until : uint8_t { All, First };

    explicit Group(Until until) : until_(until) {}
    Group(const Group&) = delete;
    Group& operator=(const Group&) = delete;
    ~Group() {
        for (Branch*& b : branches_)
            if (b) std::exchange(b, nullptr)->cancel();
    }

    template <class T>
    void add(Task<T>&& task) {
        auto h = TaskAccess::release(task);
        branches_.push_back(new Branch(*this, branches_.size(), h, h.promise()));
    }
    size_t size() const { return branches_.size(); }

    // Starts the branches in order; false when the group ended meanwhile (no suspension).
    bool start(std::coroutine_handle<> awaiter, RootState* root) {
        if (branches_.empty()) return false;
        if (root) root->on_suspend();
        for (Branch* b : branches_) {
            b->start(root);
            if (ended_) break;  // the later ones were cancelled unstarted
        }
        if (ended_) return false;
        awaiter_ = awaiter;
        return true;
    }

    // A branch reached its end (its final suspension): who runs next.
    std::coroutine_handle<> branch_done(size_t index) {
        ++finished_;
        bool failed = bool(branches_[index]->promise().error());
        bool ends =
            until_ == Until::First ? !ended_ : !ended_ && (failed || finished_ == branches_.size());
        if (!ends) return std::noop_coroutine();
        ended_ = true;
        winner_ = index;
        for (size_t i = 0; i < branches_.size(); ++i)  // the others are not wanted any more
            if (i != index && branches_[i] && !branches_[i]->finished())
                std::exchange(branches_[i], nullptr)->cancel();
        return awaiter_ ? awaiter_ : std::noop_coroutine();  // none yet: start() returns false
    }

    size_t winner() const { return winner_; }
    Branch& branch(size_t i) const { return *branches_[i]; }

    // The value (or exception) of the task at `i`, which has ended.
    template <class T>
    Result<T> take(size_t i) {
        auto h = std::coroutine_handle<Promise<T>>::from_address(branches_[i]->frame().address());
        if constexpr (std::is_void_v<T>) {
            h.promise().take();
            return {};
        } else {
            return h.promise().take();
        }
    }
    // when_all: the first exception, if a branch threw.
    void rethrow_if_failed() const {
        if (auto e = branches_[winner_]->promise().error()) std::rethrow_exception(e);
    }

private:
    std::vector<Branch*> branches_;  // owned; nullptr once cancelled
    std::coroutine_handle<> awaiter_;
    size_t finished_ = 0;
    size_t winner_ = 0;
    bool ended_ = false;
    Until until_;
};

inline std::coroutine_handle<> Branch::on_done() {
    return group_->branch_done(index_);
}

template <class... T>
class WhenAllAwaiter {
public:
    explicit WhenAllAwaiter(Task<T>&&... tasks) { (group_.add(std::move(tasks)), ...); }
    bool await_ready() const noexcept { return sizeof...(T) == 0; }
    template <class P>
    bool await_suspend(std::coroutine_handle<P> h) {
        return group_.start(h, root_of(h));
    }
    std::tuple<Result<T>...> await_resume() {
        group_.rethrow_if_failed();
        return take(std::index_sequence_for<T...>{});
    }

private:
    template <size_t... I>
    std::tuple<Result<T>...> take(std::index_sequence<I...>) {
        return {group_.template take<T>(I)...};
    }
    Group group_{Group::Until::All};
};

template <class T>
class WhenAllOfAwaiter {
public:
    explicit WhenAllOfAwaiter(std::vector<Task<T>> tasks) {
        for (auto& t : tasks) group_.add(std::move(t));
    }
    bool await_ready() const noexcept { return group_.size() == 0; }
    template <class P>
    bool await_suspend(std::coroutine_handle<P> h) {
        return group_.start(h, root_of(h));
    }
    std::vector<Result<T>> await_resume() {
        std::vector<Result<T>> out;
        if (group_.size() == 0) return out;
        group_.rethrow_if_failed();
        out.reserve(group_.size());
        for (size_t i = 0; i < group_.size(); ++i) out.push_back(group_.template take<T>(i));
        return out;
    }

private:
    Group group_{Group::Until::All};
};

template <class... T>
class WhenAnyAwaiter {
public:
    explicit WhenAnyAwaiter(Task<T>&&... tasks) { (group_.add(std::move(tasks)), ...); }
    bool await_ready() const noexcept { return false; }
    template <class P>
    bool await_suspend(std::coroutine_handle<P> h) {
        return group_.start(h, root_of(h));
    }
    std::variant<Result<T>...> await_resume() {
        return take(group_.winner(), std::index_sequence_for<T...>{});
    }

private:
    template <size_t... I>
    std::variant<Result<T>...> take(size_t winner, std::index_sequence<I...>) {
        std::variant<Result<T>...> out;
        ((I == winner ? (void)out.template emplace<I>(group_.template take<T>(I)) : void()), ...);
        return out;
    }
    Group group_{Group::Until::First};
};

template <class T>
class WhenAnyOfAwaiter {
public:
    explicit WhenAnyOfAwaiter(std::vector<Task<T>> tasks) {
        if (tasks.empty()) throw std::invalid_argument("rivet::when_any of no task");
        for (auto& t : tasks) group_.add(std::move(t));
    }
    bool await_ready() const noexcept { return false; }
    template <class P>
    bool await_suspend(std::coroutine_handle<P> h) {
        return group_.start(h, root_of(h));
    }
    std::pair<size_t, Result<T>> await_resume() {
        size_t i = group_.winner();
        return {i, group_.template take<T>(i)};
    }

private:
    Group group_{Group::Until::First};
};

inline Task<> sleep_task(int64_t ms) {
    co_await SleepAwaiter(ms);
}

template <class A>
struct AwaitResult {
    using type = decltype(std::declval<A&>().await_resume());
};
template <class T>
struct AwaitResult<Task<T>> {
    using type = T;
};

// An awaitable as a Task, so that it can be a branch.
template <class A>
Task<typename AwaitResult<A>::type> as_task(A awaitable) {
    co_return co_await std::move(awaitable);
}
template <class T>
Task<T> as_task(Task<T> task) {
    return task;
}

}  // namespace detail

// Runs every task to its end and gives their results in order (std::monostate for a Task<>).
// The first exception cancels the others and is rethrown.
template <class... T>
detail::WhenAllAwaiter<T...> when_all(Task<T>... tasks) {
    return detail::WhenAllAwaiter<T...>(std::move(tasks)...);
}
template <class T>
detail::WhenAllOfAwaiter<T> when_all(std::vector<Task<T>> tasks) {
    return detail::WhenAllOfAwaiter<T>(std::move(tasks));
}

// Ends with the first task to end and cancels the others: its value (the variant's index says
// which task it was), or its exception rethrown.
template <class... T>
requires(sizeof...(T) > 0) detail::WhenAnyAwaiter<T...> when_any(Task<T>... tasks) {
    return detail::WhenAnyAwaiter<T...>(std::move(tasks)...);
}
template <class T>
detail::WhenAnyOfAwaiter<T> when_any(std::vector<Task<T>> tasks) {
    return detail::WhenAnyOfAwaiter<T>(std::move(tasks));
}

// The value of `awaitable` (a Task or any awaiter), or TimeoutError once `limit` has passed;
// then `awaitable` is cancelled. A limit of zero or less times out at once, before it starts.
template <class A, class Rep, class Period>
auto with_timeout(A awaitable, std::chrono::duration<Rep, Period> limit)
    -> Task<typename detail::AwaitResult<A>::type> {
    using T = typename detail::AwaitResult<A>::type;
    int64_t ms = std::chrono::ceil<std::chrono::milliseconds>(limit).count();
    if (ms <= 0) throw TimeoutError();
    auto first = co_await when_any(detail::as_task(std::move(awaitable)), detail::sleep_task(ms));
    if (first.index() == 1) throw TimeoutError();
    if constexpr (std::is_void_v<T>)
        co_return;
    else
        co_return std::move(std::get<0>(first));
}

}  // namespace rivet
