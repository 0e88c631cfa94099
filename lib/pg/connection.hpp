// One libpq connection driven without blocking: every wait is on its socket's rivet::FdWatch,
// so the loop serves others meanwhile. Loop-affine. Written against the public API only.
#pragma once

#include <libpq-fe.h>

#include <exception>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <rivet/fd_watch.hpp>
#include <rivet/pg.hpp>

namespace rivet::pg::detail {

struct ResultDeleter {
    void operator()(PGresult* r) const noexcept { PQclear(r); }
};
using ResultPtr = std::unique_ptr<PGresult, ResultDeleter>;

// The exception a failed result stands for: ConnectionLost when the connection broke,
// UniqueViolation for 23505, pg::Error otherwise.
std::exception_ptr error_of(const PGresult* result, PGconn* conn, unsigned retry_after_s);

class Connection {
public:
    // Connects (with options.statement_timeout as a session setting); Unavailable when the
    // server cannot be reached within options.connect_timeout.
    static Task<std::unique_ptr<Connection>> open(const Options& options);

    explicit Connection(PGconn* conn, unsigned retry_after_s)
        : c_(conn), retry_after_s_(retry_after_s) {}
    ~Connection() {
        watch_.reset();  // out of the loop's epoll before the socket closes
        PQfinish(c_);
    }
    Connection(const Connection&) = delete;
    Connection& operator=(const Connection&) = delete;

    PGconn* raw() const { return c_; }
    int fd() const { return PQsocket(c_); }
    bool usable() const { return !broken_ && PQstatus(c_) == CONNECTION_OK; }
    // A statement was sent and its results are not all read (its waiter was cancelled).
    bool busy() const { return busy_; }
    bool in_transaction() const { return PQtransactionStatus(c_) != PQTRANS_IDLE; }
    // Checked when taken from the idle list: the server closed it meanwhile (a restart).
    bool closed_while_idle();
    bool has_prepared(const std::string& name) const { return prepared_.count(name) != 0; }

    Task<Result> exec(const std::string& sql, const Params& params);
    // A named statement, prepared on this connection first (from `sql`) if it is not yet.
    Task<Result> exec_prepared(const std::string& name, const std::string& sql,
                               const Params& params);
    // `text_of(name)`: the SQL of a prepared statement this connection has not prepared yet.
    Task<std::vector<Result>> exec_pipeline(
        const Batch& batch, const std::function<std::string(const std::string&)>& text_of);
    // After an abandoned statement: PQcancel, read what is left, roll back an open
    // transaction. Throws when the connection cannot be made clean (then close it).
    Task<> make_clean();

    // The low-level steps, for LISTEN (listener.cpp).
    Task<> flush();
    Task<ResultPtr> next_result();  // null when the statement's results are all read
    auto readable() { return watch_.wait(Interest::Read); }  // its socket, once connected
    [[noreturn]] void lost(const char* during);
    void mark_broken() { broken_ = true; }

private:
    Task<Result> collect();  // every result of one statement: the last, or the first error
    void check_sent(int sent, const char* what);

    PGconn* c_;
    unsigned retry_after_s_;
    bool busy_ = false;
    bool broken_ = false;
    std::set<std::string> prepared_;
    // Set once connected: the socket stays in the loop's epoll while the connection lives, so a
    // query's waits cost no epoll_ctl (rivet::ready would add and remove it each time).
    FdWatch watch_;
};

}  // namespace rivet::pg::detail
