// The pool's insides: PoolShared (the options and named statements, shared by every loop) and
// one LoopPool per I/O loop (its connections, used only on that loop, and the queries waiting
// for one). A Lease is one connection taken from a LoopPool; destroying it gives it back.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <rivet/coro.hpp>
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

class LoopPool {
public:
    LoopPool(PoolShared& shared, EventLoop& loop)
        : shared_(shared),
          loop_(loop),
          slots_(shared.options.max_connections, shared.options.max_waiters) {}

    // A connection: an idle one or a new one, once one of the max_connections slots is free
    // (a bounded queue: rivet::Semaphore). Throws Unavailable (503) when none can be had.
    Task<LeasePtr> acquire();
    // Back from a Lease with its slot: reused, cleaned first in the background (a cancelled
    // statement, an open transaction), or closed (broken).
    void give_back(std::unique_ptr<Connection> conn, Semaphore::Permit slot);

    PoolStats stats() const;
    const Options& options() const { return shared_.options; }
    PoolShared& shared() { return shared_; }
    EventLoop& loop() { return loop_; }

private:
    Task<Semaphore::Permit> wait_for_slot();
    Task<> clean(std::unique_ptr<Connection> conn, Semaphore::Permit slot);
    [[noreturn]] void unavailable(std::string why) const;

    PoolShared& shared_;  // owns this
    EventLoop& loop_;
    // A slot is the right to hold a connection (lent, opening, or being cleaned): so at most
    // max_connections are open, since a new one is opened only when none is idle.
    Semaphore slots_;
    std::vector<std::unique_ptr<Connection>> idle_;
    size_t open_ = 0;  // idle, lent, opening or being cleaned
    size_t cleaning_ = 0;
    // Reconnection backoff: no attempt before next_attempt_ms_ (steady clock).
    int64_t next_attempt_ms_ = 0;
    int64_t backoff_ms_ = 0;
};

class Lease {
public:
    Lease(LoopPool& pool, std::unique_ptr<Connection> conn, Semaphore::Permit slot,
          std::shared_ptr<PoolShared> keep)
        : pool(pool), conn(std::move(conn)), slot_(std::move(slot)), keep_(std::move(keep)) {}
    ~Lease() { pool.give_back(std::move(conn), std::move(slot_)); }
    LoopPool& pool;
    std::unique_ptr<Connection> conn;

private:
    Semaphore::Permit slot_;
    std::shared_ptr<PoolShared> keep_;  // the LoopPool lives as long as its PoolShared
};

int64_t steady_ms();

}  // namespace rivet::pg::detail
