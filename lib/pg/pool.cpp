// The per-loop pool: lending connections, the bounded queue of queries waiting for one, the
// cleaning of connections whose statement was abandoned, reconnection backoff.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <stdexcept>

#include "pool_impl.hpp"

namespace rivet::pg {

Unavailable::Unavailable(std::string reason, unsigned retry_after_s)
    : HttpError(503, "database unavailable"), reason_(std::move(reason)) {
    header("Retry-After", std::to_string(retry_after_s));
}

namespace detail {

int64_t steady_ms() {
    using namespace std::chrono;
    return duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count();
}

void LeaseDeleter::operator()(Lease* lease) const noexcept {
    delete lease;
}

namespace {
std::atomic<uint64_t> g_next_pool_id{1};
}

PoolShared::PoolShared(Options o) : options(std::move(o)), id(g_next_pool_id++) {
    if (options.max_connections == 0)
        throw std::invalid_argument("rivet::pg::Options: max_connections must be at least 1");
}

LoopPool& PoolShared::loop_pool(EventLoop& loop) {
    std::lock_guard lock(mutex_);
    auto& slot = loops_[&loop];
    if (!slot) slot = std::make_unique<LoopPool>(*this, loop);
    return *slot;
}

void PoolShared::add_statement(std::string name, std::string sql) {
    std::lock_guard lock(mutex_);
    statements_[std::move(name)] = std::move(sql);
}

std::string PoolShared::statement(const std::string& name) {
    std::lock_guard lock(mutex_);
    auto it = statements_.find(name);
    if (it == statements_.end()) throw Error("no prepared statement named " + name);
    return it->second;
}

// A coroutine nobody awaits: it runs from its call to its end and frees itself (the cleaning
// of a connection, started from a Lease's destructor).
struct LoopPool::Detached {
    struct promise_type {
        Detached get_return_object() noexcept { return {}; }
        std::suspend_never initial_suspend() noexcept { return {}; }
        std::suspend_never final_suspend() noexcept { return {}; }
        void return_void() noexcept {}
        void unhandled_exception() noexcept {}  // clean() catches what it can throw
    };
};

// Waits for a connection given back by another query (or for room to open one).
class LoopPool::WaitAwaiter {
public:
    explicit WaitAwaiter(LoopPool& pool) : pool_(pool), w_(std::make_shared<Waiter>()) {}
    WaitAwaiter(const WaitAwaiter&) = delete;
    ~WaitAwaiter() {
        if (w_->resumed) return;
        // Destroyed while waiting (the handler was cancelled): out of the queue, and a
        // connection already handed over goes back.
        w_->gone = true;
        w_->timer.cancel();
        pool_.forget(w_);
        if (w_->conn) pool_.give_back(std::move(w_->conn));
    }
    bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> h) {
        w_->h = h;
        pool_.waiters_.push_back(w_);
        LoopPool* pool = &pool_;
        w_->timer = pool_.loop_.call_after(pool_.options().queue_timeout, [w = w_, pool] {
            if (w->woken || w->gone) return;
            pool->forget(w);
            w->woken = w->timed_out = w->resumed = true;
            w->h.resume();
        });
    }
    std::unique_ptr<Connection> await_resume() {
        if (w_->timed_out) pool_.unavailable("no database connection free within queue_timeout");
        return std::move(w_->conn);
    }

private:
    LoopPool& pool_;
    std::shared_ptr<Waiter> w_;
};

LoopPool::~LoopPool() = default;

void LoopPool::unavailable(std::string why) const {
    throw Unavailable(std::move(why), options().retry_after_s);
}

Task<LeasePtr> LoopPool::acquire() {
    const Options& o = options();
    for (;;) {
        while (!idle_.empty()) {
            std::unique_ptr<Connection> conn = std::move(idle_.back());
            idle_.pop_back();
            if (conn->closed_while_idle()) {  // the server restarted or ended it meanwhile
                conn.reset();
                --open_;
                continue;
            }
            co_return LeasePtr(new Lease(*this, std::move(conn), shared_.shared_from_this()));
        }
        if (open_ < o.max_connections) {
            if (steady_ms() < next_attempt_ms_)
                unavailable("database unreachable: waiting to reconnect");
            // The slot is counted while the connection opens; given up if this fails or the
            // waiting query is cancelled meanwhile.
            struct Slot {
                LoopPool& pool;
                bool kept = false;
                ~Slot() {
                    if (!kept) pool.close_one();
                }
            } slot{*this};
            ++open_;
            std::unique_ptr<Connection> conn;
            std::exception_ptr failed;
            try {
                conn = co_await Connection::open(o);
            } catch (...) {
                failed = std::current_exception();
            }
            if (failed) {
                backoff_ms_ = std::min<int64_t>(
                    backoff_ms_ ? backoff_ms_ * 2 : o.reconnect_backoff_min.count(),
                    o.reconnect_backoff_max.count());
                next_attempt_ms_ = steady_ms() + backoff_ms_;
                std::rethrow_exception(failed);
            }
            backoff_ms_ = 0;
            next_attempt_ms_ = 0;
            slot.kept = true;
            co_return LeasePtr(new Lease(*this, std::move(conn), shared_.shared_from_this()));
        }
        if (waiters_.size() >= o.max_waiters)
            unavailable("every database connection is busy and the queue is full");
        std::unique_ptr<Connection> conn = co_await WaitAwaiter(*this);
        if (conn) co_return LeasePtr(new Lease(*this, std::move(conn), shared_.shared_from_this()));
        // null: a connection closed, so there may be room to open one: try again
    }
}

void LoopPool::give_back(std::unique_ptr<Connection> conn) {
    if (!conn) return;
    if (conn->usable() && !conn->busy() && !conn->in_transaction()) return wake(std::move(conn));
    // Cleaning waits on the socket: only on this pool's loop (not at shutdown, from main).
    if (conn->usable() && EventLoop::current() == &loop_) {
        ++cleaning_;
        clean(std::move(conn));
        return;
    }
    conn.reset();
    close_one();
}

LoopPool::Detached LoopPool::clean(std::unique_ptr<Connection> conn) {
    auto keep = shared_.shared_from_this();  // the pool stays while this runs
    try {
        co_await conn->make_clean();
    } catch (...) {
        conn->mark_broken();
    }
    --cleaning_;
    give_back(std::move(conn));
}

void LoopPool::close_one() {
    --open_;
    wake(nullptr);  // a waiter may now open one
}

void LoopPool::wake(std::unique_ptr<Connection> conn) {
    while (!waiters_.empty()) {
        std::shared_ptr<Waiter> w = std::move(waiters_.front());
        waiters_.pop_front();
        if (w->gone) continue;
        w->woken = true;
        w->conn = std::move(conn);
        // Posted, never resumed here: give_back runs inside other coroutines' destructors.
        loop_.post([w] {
            if (w->gone) return;
            w->resumed = true;
            w->timer.cancel();
            w->h.resume();
        });
        return;
    }
    if (conn) idle_.push_back(std::move(conn));
}

void LoopPool::forget(const std::shared_ptr<Waiter>& w) {
    auto it = std::find(waiters_.begin(), waiters_.end(), w);
    if (it != waiters_.end()) waiters_.erase(it);
}

PoolStats LoopPool::stats() const {
    return {.open = open_, .idle = idle_.size(), .waiting = waiters_.size(), .cleaning = cleaning_};
}

}  // namespace detail

using detail::LeasePtr;

Pool::Pool(Options options) : shared_(std::make_shared<detail::PoolShared>(std::move(options))) {}

Pool::~Pool() = default;

detail::LoopPool& Pool::here() const {
    EventLoop* loop = EventLoop::current();
    if (!loop) throw std::logic_error("rivet::pg::Pool used off an I/O loop");
    // Per thread, so that the request path takes no lock once a loop has its pool.
    thread_local std::vector<std::pair<uint64_t, detail::LoopPool*>> known;
    for (auto& [id, pool] : known)
        if (id == shared_->id && &pool->loop() == loop) return *pool;
    detail::LoopPool& pool = shared_->loop_pool(*loop);
    known.emplace_back(shared_->id, &pool);
    return pool;
}

void Pool::prepare(std::string name, std::string sql) {
    shared_->add_statement(std::move(name), std::move(sql));
}

Task<Result> Pool::run(std::string sql, Params params, bool prepared) {
    LeasePtr lease = co_await here().acquire();
    detail::Connection& conn = *lease->conn;
    if (!prepared) co_return co_await conn.exec(sql, params);
    std::string text = conn.has_prepared(sql) ? std::string() : shared_->statement(sql);
    co_return co_await conn.exec_prepared(sql, text, params);
}

Task<Transaction> Pool::transaction() {
    LeasePtr lease = co_await here().acquire();
    co_await lease->conn->exec("BEGIN", Params());
    co_return Transaction(std::move(lease));
}

Task<std::vector<Result>> Pool::pipeline(Batch batch) {
    if (batch.size() == 0) co_return std::vector<Result>();
    LeasePtr lease = co_await here().acquire();
    co_return co_await lease->conn->exec_pipeline(batch);
}

PoolStats Pool::stats() const {
    return here().stats();
}

Transaction::Transaction(LeasePtr lease) : lease_(std::move(lease)) {}
Transaction::Transaction(Transaction&&) noexcept = default;
Transaction& Transaction::operator=(Transaction&&) noexcept = default;
Transaction::~Transaction() = default;  // the Lease's pool rolls back what was not ended

Task<Result> Transaction::run(std::string sql, Params params, bool prepared) {
    if (!lease_) throw Error("the transaction has ended");
    detail::Connection& conn = *lease_->conn;
    if (!prepared) co_return co_await conn.exec(sql, params);
    std::string text =
        conn.has_prepared(sql) ? std::string() : lease_->pool.shared().statement(sql);
    co_return co_await conn.exec_prepared(sql, text, params);
}

Task<> Transaction::commit() {
    if (!lease_) throw Error("the transaction has ended");
    LeasePtr lease = std::move(lease_);
    co_await lease->conn->exec("COMMIT", Params());
}

Task<> Transaction::rollback() {
    if (!lease_) throw Error("the transaction has ended");
    LeasePtr lease = std::move(lease_);
    co_await lease->conn->exec("ROLLBACK", Params());
}

}  // namespace rivet::pg
