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

void LoopPool::unavailable(std::string why) const {
    throw Unavailable(std::move(why), options().retry_after_s);
}

Task<Semaphore::Permit> LoopPool::wait_for_slot() {
    if (auto slot = slots_.try_acquire()) co_return std::move(*slot);  // the usual case
    // with_timeout's value must be default-constructible (when.hpp): a Permit is not.
    auto acquire = [](Semaphore& slots) -> Task<std::optional<Semaphore::Permit>> {
        co_return co_await slots.acquire();
    };
    std::optional<Semaphore::Permit> slot;
    const char* refused = nullptr;
    try {
        slot = co_await with_timeout(acquire(slots_), options().queue_timeout);
    } catch (const QueueFull&) {
        refused = "every database connection is busy and the queue is full";
    } catch (const TimeoutError&) {
        refused = "no database connection free within queue_timeout";
    }
    if (refused) unavailable(refused);
    co_return std::move(*slot);
}

Task<LeasePtr> LoopPool::acquire() {
    const Options& o = options();
    Semaphore::Permit slot = co_await wait_for_slot();
    while (!idle_.empty()) {
        std::unique_ptr<Connection> conn = std::move(idle_.back());
        idle_.pop_back();
        if (!conn->closed_while_idle())
            co_return LeasePtr(
                new Lease(*this, std::move(conn), std::move(slot), shared_.shared_from_this()));
        --open_;  // the server restarted or ended it meanwhile
    }
    if (steady_ms() < next_attempt_ms_) unavailable("database unreachable: waiting to reconnect");
    // Counted while it opens; uncounted if that fails or the waiting query is cancelled.
    struct Opening {
        size_t& open;
        bool kept = false;
        ~Opening() {
            if (!kept) --open;
        }
    } opening{++open_};
    std::unique_ptr<Connection> conn;
    std::exception_ptr failed;
    try {
        conn = co_await with_timeout(Connection::open(o), o.connect_timeout);
    } catch (const TimeoutError&) {
        failed = std::make_exception_ptr(
            Unavailable("database connection: no answer within connect_timeout", o.retry_after_s));
    } catch (...) {
        failed = std::current_exception();
    }
    if (failed) {
        backoff_ms_ =
            std::min<int64_t>(backoff_ms_ ? backoff_ms_ * 2 : o.reconnect_backoff_min.count(),
                              o.reconnect_backoff_max.count());
        next_attempt_ms_ = steady_ms() + backoff_ms_;
        std::rethrow_exception(failed);
    }
    backoff_ms_ = 0;
    next_attempt_ms_ = 0;
    opening.kept = true;
    co_return LeasePtr(
        new Lease(*this, std::move(conn), std::move(slot), shared_.shared_from_this()));
}

void LoopPool::give_back(std::unique_ptr<Connection> conn, Semaphore::Permit slot) {
    if (!conn) return;
    if (conn->usable() && !conn->busy() && !conn->in_transaction()) {
        idle_.push_back(std::move(conn));
        return;  // then the slot: its next holder (woken on a later turn) finds it idle
    }
    // Cleaning waits on the socket: only on this pool's loop (not at shutdown, from main).
    if (conn->usable() && EventLoop::current() == &loop_) {
        ++cleaning_;
        spawn(clean(std::move(conn), std::move(slot)));
        return;
    }
    conn.reset();
    --open_;
}

// In the background (rivet::spawn), holding the connection's slot until it is clean. The app
// cancels it at shutdown: the connection then closes.
Task<> LoopPool::clean(std::unique_ptr<Connection> conn, Semaphore::Permit slot) {
    auto keep = shared_.shared_from_this();  // the pool stays while this runs
    struct Counted {
        size_t& n;
        ~Counted() { --n; }
    } counted{cleaning_};
    try {
        co_await conn->make_clean();
        if (conn->busy() || conn->in_transaction()) conn->mark_broken();
    } catch (...) {
        conn->mark_broken();
    }
    give_back(std::move(conn), std::move(slot));
}

PoolStats LoopPool::stats() const {
    return {
        .open = open_, .idle = idle_.size(), .waiting = slots_.waiting(), .cleaning = cleaning_};
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
