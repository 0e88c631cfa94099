// rivet::pg: PostgreSQL for coroutine handlers, on libpq's asynchronous API, never blocking a
// loop. The optional library rivet_pg (CMake: find_package(rivet COMPONENTS pg), target
// rivet::pg; pkg-config: rivet-pg); built when libpq is found.
//
//   rivet::pg::Pool db({.conninfo = "host=/run/postgresql dbname=notes", .max_connections = 8});
//   rivet::App app;  // after the pool: the app (and its waiting handlers) goes first
//   db.prepare("note_by_id", "select id, body from notes where id = $1");
//   app.get("/notes/:id", [&](rivet::Request& req, rivet::Response& res) -> rivet::Task<> {
//       auto rows = co_await db.execute("note_by_id", std::string(req.param("id")));
//       if (rows.empty()) throw rivet::HttpError(404, "no such note");
//       res.json({{"id", rows[0].get<int64_t>(0)}, {"body", rows[0]["body"].as<std::string>()}});
//   });
//
// Each I/O loop has its own connections (opened when first needed, at most max_connections),
// used only on that loop. When all are busy a query waits in a bounded queue (max_waiters);
// past it, or while the server cannot be reached, it throws pg::Unavailable: an HttpError(503)
// with Retry-After, so an uncaught one answers 503. A query whose handler is cancelled (its
// client left) is cancelled on the server (PQcancel); its connection is reused once clean.
// Server errors are pg::Error (SQLSTATE in sqlstate()), pg::UniqueViolation for 23505.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <rivet/http_error.hpp>
#include <rivet/pg_result.hpp>
#include <rivet/task.hpp>

namespace rivet::pg {

struct Options {
    // libpq's connection string or URI ("host=/tmp port=5432 dbname=app user=app",
    // "postgresql://app@db/app"); see libpq's "Connection Strings".
    std::string conninfo{};
    size_t max_connections = 4;  // per I/O loop
    size_t max_waiters = 64;     // queries waiting for a connection, per loop; past it: 503
    // A waiting query gives up after this (503) rather than wait for ever.
    std::chrono::milliseconds queue_timeout{5000};
    // The server ends a statement running longer (SQLSTATE 57014); 0: the server's setting.
    std::chrono::milliseconds statement_timeout{0};
    std::chrono::milliseconds connect_timeout{5000};
    // After a failed connection attempt, queries fail at once (503) for a delay that doubles
    // from the first to the last value at each further failure, and resets at a success.
    std::chrono::milliseconds reconnect_backoff_min{100};
    std::chrono::milliseconds reconnect_backoff_max{2000};
    unsigned retry_after_s = 1;  // Retry-After of the 503s
};

// The database cannot be reached (down, restarting, the connection broke mid-query) or every
// connection is busy and the queue is full: 503 with Retry-After, unless the handler catches it.
class Unavailable : public HttpError {
public:
    Unavailable(std::string reason, unsigned retry_after_s);
    const std::string& reason() const noexcept { return reason_; }  // for logs, not the client

private:
    std::string reason_{};
};

// The connection broke while a statement was in flight: whether it ran is unknown.
class ConnectionLost : public Unavailable {
public:
    using Unavailable::Unavailable;
};

namespace detail {
class LoopPool;
class Lease;
class PoolShared;
class ListenerState;
struct LeaseDeleter {
    void operator()(Lease* lease) const noexcept;
};
using LeasePtr = std::unique_ptr<Lease, LeaseDeleter>;
}  // namespace detail

// Statements sent together in libpq's pipeline mode: one round trip for all of them.
class Batch {
public:
    template <class... A>
    Batch& add(std::string sql, A&&... args) {
        statements_.push_back({std::move(sql), Params::of(std::forward<A>(args)...), false});
        return *this;
    }
    // A statement made with Pool::prepare, by name: parsed and planned once per connection
    // (prepared inside the same round trip on a connection that has not seen it yet).
    template <class... A>
    Batch& add_prepared(std::string name, A&&... args) {
        statements_.push_back({std::move(name), Params::of(std::forward<A>(args)...), true});
        return *this;
    }
    size_t size() const { return statements_.size(); }

    struct Statement {
        std::string sql;  // or the prepared statement's name
        Params params;
        bool prepared = false;
    };
    const std::vector<Statement>& statements() const { return statements_; }

private:
    std::vector<Statement> statements_{};
};

// A transaction on one connection, begun by Pool::transaction(). Destroyed before commit() or
// rollback() (an exception, a cancelled handler), it is rolled back before its connection is
// reused. One statement at a time; on the loop that began it.
class Transaction {
public:
    Transaction(Transaction&&) noexcept;
    Transaction& operator=(Transaction&&) noexcept;
    ~Transaction();

    template <class... A>
    Task<Result> query(std::string sql, A&&... args) {
        return run(std::move(sql), Params::of(std::forward<A>(args)...), false);
    }
    template <class... A>
    Task<Result> execute(std::string statement, A&&... args) {
        return run(std::move(statement), Params::of(std::forward<A>(args)...), true);
    }
    Task<> commit();
    Task<> rollback();

private:
    friend class Pool;
    explicit Transaction(detail::LeasePtr lease);
    Task<Result> run(std::string sql_or_name, Params params, bool prepared);
    detail::LeasePtr lease_;
};

struct Notification {
    std::string channel{};
    std::string payload{};
    int backend_pid = 0;  // the notifying session's server process
};

// LISTEN on a dedicated connection of its own (not one of the pool's), opened by the first
// next(). Notifications sent while it is not connected are lost (PostgreSQL keeps none): after
// a ConnectionLost, the next next() reconnects and listens again. On one loop, one next() at
// a time (the loop that made it).
class Listener {
public:
    Listener(Listener&&) noexcept;
    Listener& operator=(Listener&&) noexcept;
    ~Listener();

    // The next notification on any of the channels; throws Unavailable/ConnectionLost.
    Task<Notification> next();
    // Connects and listens now (next() does it too): after it, no notification is missed.
    Task<> start();

private:
    friend class Pool;
    explicit Listener(std::unique_ptr<detail::ListenerState> state);
    std::unique_ptr<detail::ListenerState> state_{};
};

struct PoolStats {        // the calling loop's
    size_t open = 0;      // connections open or opening
    size_t idle = 0;      // of which free
    size_t waiting = 0;   // queries waiting for one
    size_t cleaning = 0;  // returned busy (a cancelled query): being cancelled, then reused
};

class Pool {
public:
    explicit Pool(Options options);
    ~Pool();  // after the app has stopped: closes every connection
    Pool(const Pool&) = delete;
    Pool& operator=(const Pool&) = delete;

    // One statement with parameters $1, $2, ... (text format; std::nullopt is NULL).
    template <class... A>
    Task<Result> query(std::string sql, A&&... args) {
        return run(std::move(sql), Params::of(std::forward<A>(args)...), false);
    }
    // Names a statement, prepared on each connection the first time it executes it.
    void prepare(std::string name, std::string sql);
    template <class... A>
    Task<Result> execute(std::string name, A&&... args) {
        return run(std::move(name), Params::of(std::forward<A>(args)...), true);
    }
    // BEGIN on a connection held until the transaction ends.
    Task<Transaction> transaction();
    // Every statement of the batch in one round trip (pipeline mode); the results in order.
    // A failing statement throws its error; those after it did not run (nor did any of the
    // batch commit on its own: the batch is one implicit transaction unless it says BEGIN).
    Task<std::vector<Result>> pipeline(Batch batch);
    Listener listen(std::vector<std::string> channels);

    PoolStats stats() const;  // on an I/O loop

private:
    Task<Result> run(std::string sql_or_name, Params params, bool prepared);
    detail::LoopPool& here() const;
    std::shared_ptr<detail::PoolShared> shared_{};
};

}  // namespace rivet::pg
