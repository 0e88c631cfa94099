// The pool's insides: PoolShared (the options and named statements, shared by every loop) and
// one LoopPool per I/O loop (its connections, used only on that loop, and the queries waiting
// for one). A Lease is one connection taken from a LoopPool; destroying it gives it back.
#pragma once

#include <coroutine>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <rivet/event_loop.hpp>
#include <rivet/pg.hpp>

#include "connection.hpp"

namespace rivet::pg::detail {

class PoolShared : public std::enable_shared_from_this<PoolShared> {
public:
    explicit PoolShared(Options o);
    LoopPool& loop_pool(EventLoop& loop);  // this loop's, made on first use

    const Options options;
    const uint64_t id;  // tells pools apart in the per-thread cache (addresses are reused)

    void add_statement(std::string name, std::string sql);
    std::string statement(const std::string& name);  // pg::Error when it was never prepared

private:
    std::mutex mutex_;
    std::map<const EventLoop*, std::unique_ptr<LoopPool>> loops_;
    std::map<std::string, std::string> statements_;
};

// A query waiting for a connection (every one busy). Shared by its awaiter and the pool.
struct Waiter {
    std::coroutine_handle<> h;
    std::unique_ptr<Connection> conn;  // handed over; null: retry (a connection closed)
    bool woken = false;                // taken off the queue: a resume is posted
    bool timed_out = false;
    bool resumed = false;
    bool gone = false;  // its coroutine was destroyed before the resume
    TimerHandle timer;
};

class LoopPool {
public:
    LoopPool(PoolShared& shared, EventLoop& loop) : shared_(shared), loop_(loop) {}
    ~LoopPool();

    // A connection: an idle one, a new one (below max_connections), or after a wait in the
    // bounded queue. Throws Unavailable (503) when none can be had.
    Task<LeasePtr> acquire();
    // Back from a Lease: reused, cleaned first (a cancelled statement, an open transaction)
    // or closed (broken).
    void give_back(std::unique_ptr<Connection> conn);

    PoolStats stats() const;
    const Options& options() const { return shared_.options; }
    PoolShared& shared() { return shared_; }
    EventLoop& loop() { return loop_; }

private:
    class WaitAwaiter;
    struct Detached;
    Detached clean(std::unique_ptr<Connection> conn);
    void close_one();  // a connection is gone: a waiter may open another
    void wake(std::unique_ptr<Connection> conn);
    void forget(const std::shared_ptr<Waiter>& w);
    [[noreturn]] void unavailable(std::string why) const;

    PoolShared& shared_;  // owns this
    EventLoop& loop_;
    std::vector<std::unique_ptr<Connection>> idle_;
    std::deque<std::shared_ptr<Waiter>> waiters_;
    size_t open_ = 0;  // open, opening, or lent
    size_t cleaning_ = 0;
    // Reconnection backoff: no attempt before next_attempt_ms_ (steady clock).
    int64_t next_attempt_ms_ = 0;
    int64_t backoff_ms_ = 0;
};

class Lease {
public:
    Lease(LoopPool& pool, std::unique_ptr<Connection> conn, std::shared_ptr<PoolShared> keep)
        : pool(pool), conn(std::move(conn)), keep_(std::move(keep)) {}
    ~Lease() { pool.give_back(std::move(conn)); }
    LoopPool& pool;
    std::unique_ptr<Connection> conn;

private:
    std::shared_ptr<PoolShared> keep_;  // the LoopPool lives as long as its PoolShared
};

int64_t steady_ms();

}  // namespace rivet::pg::detail
