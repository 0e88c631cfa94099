// libpq's asynchronous protocol on a rivet loop: send, flush while the socket takes it, read
// results as they arrive. libpq is non-blocking here (PQsetnonblocking), so no call waits.
#include "connection.hpp"

#include <algorithm>

#include <rivet/coro.hpp>

namespace rivet::pg::detail {

namespace {

std::string trimmed(const char* message) {
    std::string s = message ? message : "";
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    return s;
}

// libpq's arrays of parameter pointers, valid while `params` lives.
struct ParamArrays {
    explicit ParamArrays(const Params& params) {
        for (const auto& v : params.values()) pointers.push_back(v ? v->c_str() : nullptr);
    }
    int count() const { return static_cast<int>(pointers.size()); }
    const char* const* data() const { return pointers.empty() ? nullptr : pointers.data(); }
    std::vector<const char*> pointers;
};

}  // namespace

std::exception_ptr error_of(const PGresult* result, PGconn* conn, unsigned retry_after_s) {
    std::string message = trimmed(result ? PQresultErrorMessage(result) : PQerrorMessage(conn));
    if (message.empty()) message = trimmed(PQerrorMessage(conn));
    if (PQstatus(conn) == CONNECTION_BAD)
        return std::make_exception_ptr(
            ConnectionLost("database connection lost: " + message, retry_after_s));
    const char* state = result ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
    const char* detail = result ? PQresultErrorField(result, PG_DIAG_MESSAGE_DETAIL) : nullptr;
    std::string sqlstate = state ? state : "";
    // 57P01..57P03: the server is shutting down or cannot take connections now.
    if (sqlstate.rfind("57P0", 0) == 0 || sqlstate.rfind("08", 0) == 0)
        return std::make_exception_ptr(
            ConnectionLost("database unavailable: " + message, retry_after_s));
    if (sqlstate == "23505")
        return std::make_exception_ptr(UniqueViolation(message, sqlstate, detail ? detail : ""));
    return std::make_exception_ptr(Error(message, sqlstate, detail ? detail : ""));
}

Task<std::unique_ptr<Connection>> Connection::open(const Options& options) {
    std::string session;  // libpq's "options": settings of the server session
    if (options.statement_timeout.count() > 0)
        session = "-c statement_timeout=" + std::to_string(options.statement_timeout.count());
    const char* keys[] = {"dbname", session.empty() ? nullptr : "options", nullptr};
    const char* values[] = {options.conninfo.c_str(), session.c_str(), nullptr};
    PGconn* raw = PQconnectStartParams(keys, values, 1);
    if (!raw) throw Unavailable("database connection: out of memory", options.retry_after_s);
    auto conn = std::make_unique<Connection>(raw, options.retry_after_s);
    if (PQstatus(raw) == CONNECTION_BAD || PQsetnonblocking(raw, 1) != 0)
        throw Unavailable("database connection: " + trimmed(PQerrorMessage(raw)),
                          options.retry_after_s);
    // As libpq's manual says: start as if PQconnectPoll had asked to write.
    PostgresPollingStatusType state = PGRES_POLLING_WRITING;
    while (state != PGRES_POLLING_OK) {
        if (state == PGRES_POLLING_READING)
            co_await rivet::readable(PQsocket(raw));
        else
            co_await rivet::writable(PQsocket(raw));
        state = PQconnectPoll(raw);
        if (state == PGRES_POLLING_FAILED)
            throw Unavailable("database connection: " + trimmed(PQerrorMessage(raw)),
                              options.retry_after_s);
    }
    conn->watch_ = FdWatch(PQsocket(raw));  // the socket is settled now: watched for good
    co_return conn;
}

bool Connection::closed_while_idle() {
    // Its watch saw the socket stir while idle (the server closed it, or sent a notice): look.
    // Otherwise nothing arrived, and no system call is needed to know it.
    if (fd() < 0) return true;
    if (watch_.stirred()) {
        watch_.clear_stirred();
        // An idle connection has nothing to read unless the server ended it (or sent a
        // notice or a notification, which consuming reads and keeps it usable).
        if (PQconsumeInput(c_) == 0) broken_ = true;
        while (PGnotify* n = PQnotifies(c_)) PQfreemem(n);  // no LISTEN on pool connections
    }
    return !usable();
}

void Connection::lost(const char* during) {
    broken_ = true;
    throw ConnectionLost(
        std::string("database connection lost ") + during + ": " + trimmed(PQerrorMessage(c_)),
        retry_after_s_);
}

void Connection::check_sent(int sent, const char* what) {
    if (sent) {
        busy_ = true;
        return;
    }
    if (PQstatus(c_) == CONNECTION_BAD) lost(what);
    throw Error(std::string(what) + ": " + trimmed(PQerrorMessage(c_)));
}

Task<> Connection::flush() {
    for (;;) {
        int left = PQflush(c_);
        if (left == 0) co_return;
        if (left < 0) lost("while sending");
        // The server may be writing results we must read before it reads more of ours.
        Interest fired = co_await watch_.wait(Interest::Read | Interest::Write);
        if (any(fired & (Interest::Read | Interest::Hangup)) && PQconsumeInput(c_) == 0)
            lost("while sending");
    }
}

Task<ResultPtr> Connection::next_result() {
    // What libpq has buffered first: a pipeline's 20 results often arrive in one read, and
    // consuming before each would cost a recv per result.
    for (;;) {
        if (!PQisBusy(c_)) co_return ResultPtr(PQgetResult(c_));
        co_await watch_.wait(Interest::Read);
        if (PQconsumeInput(c_) == 0) lost("while waiting for a result");
    }
}

Task<Result> Connection::collect() {
    ResultPtr last;
    std::exception_ptr error;
    for (;;) {
        ResultPtr r = co_await next_result();
        if (!r) break;
        switch (PQresultStatus(r.get())) {
            case PGRES_FATAL_ERROR:
            case PGRES_BAD_RESPONSE:
            case PGRES_NONFATAL_ERROR:
                if (!error) error = error_of(r.get(), c_, retry_after_s_);
                break;
            case PGRES_COPY_IN:
            case PGRES_COPY_OUT:
            case PGRES_COPY_BOTH:
                broken_ = true;  // COPY is not spoken here: the connection cannot go on
                throw Error("COPY is not supported by rivet::pg");
            default:
                last = std::move(r);
        }
    }
    busy_ = false;
    if (error) std::rethrow_exception(error);
    co_return Result(last.release());
}

Task<Result> Connection::exec(const std::string& sql, const Params& params) {
    ParamArrays p(params);
    check_sent(
        PQsendQueryParams(c_, sql.c_str(), p.count(), nullptr, p.data(), nullptr, nullptr, 0),
        "sending a query");
    co_await flush();
    co_return co_await collect();
}

Task<Result> Connection::exec_prepared(const std::string& name, const std::string& sql,
                                       const Params& params) {
    if (!prepared_.count(name)) {
        check_sent(PQsendPrepare(c_, name.c_str(), sql.c_str(), 0, nullptr), "preparing");
        co_await flush();
        co_await collect();  // throws the server's error (bad SQL) before executing
        prepared_.insert(name);
    }
    ParamArrays p(params);
    check_sent(PQsendQueryPrepared(c_, name.c_str(), p.count(), p.data(), nullptr, nullptr, 0),
               "executing a prepared statement");
    co_await flush();
    co_return co_await collect();
}

Task<std::vector<Result>> Connection::exec_pipeline(
    const Batch& batch, const std::function<std::string(const std::string&)>& text_of) {
    // Statements this connection has not prepared: prepared first, in the same round trip.
    std::vector<std::string> preparing;
    for (const auto& s : batch.statements())
        if (s.prepared && !prepared_.count(s.sql) &&
            std::find(preparing.begin(), preparing.end(), s.sql) == preparing.end())
            preparing.push_back(s.sql);
    std::vector<std::string> texts;
    for (const auto& name : preparing) texts.push_back(text_of(name));  // pg::Error if unknown
    if (PQenterPipelineMode(c_) == 0) throw Error("cannot enter pipeline mode");
    busy_ = true;  // from here a cancelled waiter leaves results to read
    for (size_t i = 0; i < preparing.size(); ++i)
        if (!PQsendPrepare(c_, preparing[i].c_str(), texts[i].c_str(), 0, nullptr))
            lost("while sending a pipeline");
    for (const auto& s : batch.statements()) {
        ParamArrays p(s.params);
        int sent = s.prepared ? PQsendQueryPrepared(c_, s.sql.c_str(), p.count(), p.data(), nullptr,
                                                    nullptr, 0)
                              : PQsendQueryParams(c_, s.sql.c_str(), p.count(), nullptr, p.data(),
                                                  nullptr, nullptr, 0);
        if (!sent) lost("while sending a pipeline");
    }
    if (PQpipelineSync(c_) == 0) lost("while sending a pipeline");
    co_await flush();
    std::vector<Result> results;
    results.reserve(batch.size());
    std::exception_ptr error;
    for (size_t i = 0; i < preparing.size(); ++i) {  // the prepares' results, then the batch's
        bool failed = false;
        while (ResultPtr r = co_await next_result()) {
            ExecStatusType status = PQresultStatus(r.get());
            if (status == PGRES_FATAL_ERROR || status == PGRES_BAD_RESPONSE) {
                failed = true;
                if (!error) error = error_of(r.get(), c_, retry_after_s_);
            }
        }
        if (!failed) prepared_.insert(preparing[i]);
    }
    for (size_t i = 0; i < batch.size(); ++i) {
        ResultPtr last;
        while (ResultPtr r = co_await next_result()) {
            ExecStatusType status = PQresultStatus(r.get());
            if (status == PGRES_FATAL_ERROR || status == PGRES_BAD_RESPONSE) {
                if (!error) error = error_of(r.get(), c_, retry_after_s_);
            } else if (status != PGRES_PIPELINE_ABORTED) {
                last = std::move(r);
            }
        }
        results.emplace_back(last.release());
    }
    ResultPtr sync = co_await next_result();
    if (!sync || PQresultStatus(sync.get()) != PGRES_PIPELINE_SYNC) {
        broken_ = true;
        throw Error("pipeline: the server's results and the batch disagree");
    }
    busy_ = false;
    if (PQexitPipelineMode(c_) == 0) broken_ = true;
    if (error) std::rethrow_exception(error);
    co_return results;
}

Task<> Connection::make_clean() {
    if (PQpipelineStatus(c_) != PQ_PIPELINE_OFF) {
        broken_ = true;  // reading a half-read pipeline back to its sync: not worth it, close
        co_return;
    }
    if (busy_) {
        co_await flush();  // what was half sent must leave before the server can end it
        // PQcancel opens a second connection to the server and waits for its answer (libpq
        // has no asynchronous cancel before 17): on a worker, so the loop does not wait.
        // Freed with this frame, which a job in flight keeps until it ends (rivet/when.hpp).
        std::unique_ptr<PGcancel, void (*)(PGcancel*)> cancel(PQgetCancel(c_), PQfreeCancel);
        if (cancel) {
            auto send_cancel = [raw = cancel.get()] {
                char why[256];
                PQcancel(raw, why, sizeof why);
            };
            std::exception_ptr no_worker;
            try {
                co_await on_workers(send_cancel);
            } catch (...) {
                no_worker = std::current_exception();  // the worker queue is full
            }
            if (no_worker) send_cancel();  // then here: a short block beats a query left running
        }
        while (co_await next_result()) {
        }
        busy_ = false;
    }
    if (in_transaction() && usable()) {
        check_sent(PQsendQuery(c_, "ROLLBACK"), "rolling back");
        co_await flush();
        co_await collect();
    }
}

}  // namespace rivet::pg::detail
