// LISTEN/NOTIFY on a connection of its own: notifications arrive between statements, read from
// the socket as it becomes readable.
#include <algorithm>

#include <rivet/async.hpp>

#include "pool_impl.hpp"

namespace rivet::pg {

namespace detail {

class ListenerState {
public:
    ListenerState(std::shared_ptr<PoolShared> shared, std::vector<std::string> channels)
        : shared(std::move(shared)), channels(std::move(channels)) {}

    std::shared_ptr<PoolShared> shared;
    std::vector<std::string> channels;
    std::unique_ptr<Connection> conn;
    // After a failed attempt, the next waits (rather than fails) until this time.
    int64_t next_attempt_ms = 0;
    int64_t backoff_ms = 0;
};

}  // namespace detail

Listener::Listener(std::unique_ptr<detail::ListenerState> state) : state_(std::move(state)) {}
Listener::Listener(Listener&&) noexcept = default;
Listener& Listener::operator=(Listener&&) noexcept = default;
Listener::~Listener() = default;

Listener Pool::listen(std::vector<std::string> channels) {
    return Listener(std::make_unique<detail::ListenerState>(shared_, std::move(channels)));
}

Task<> Listener::start() {
    detail::ListenerState& s = *state_;
    if (s.conn && s.conn->usable()) co_return;
    s.conn.reset();
    const Options& o = s.shared->options;
    if (int64_t wait = s.next_attempt_ms - detail::steady_ms(); wait > 0)
        co_await rivet::sleep(std::chrono::milliseconds(wait));
    std::exception_ptr failed;
    try {
        auto conn = co_await detail::Connection::open(o);
        for (const std::string& channel : s.channels) {
            char* quoted = PQescapeIdentifier(conn->raw(), channel.c_str(), channel.size());
            if (!quoted) throw Error("LISTEN: bad channel name " + channel);
            std::string sql = std::string("LISTEN ") + quoted;
            PQfreemem(quoted);
            co_await conn->exec(sql, Params());
        }
        s.conn = std::move(conn);
    } catch (...) {
        failed = std::current_exception();
    }
    if (failed) {
        s.backoff_ms =
            std::min<int64_t>(s.backoff_ms ? s.backoff_ms * 2 : o.reconnect_backoff_min.count(),
                              o.reconnect_backoff_max.count());
        s.next_attempt_ms = detail::steady_ms() + s.backoff_ms;
        std::rethrow_exception(failed);
    }
    s.backoff_ms = 0;
}

Task<Notification> Listener::next() {
    co_await start();
    detail::ListenerState& s = *state_;
    PGconn* raw = s.conn->raw();
    for (;;) {
        if (PGnotify* n = PQnotifies(raw)) {
            Notification out{n->relname ? n->relname : "", n->extra ? n->extra : "", n->be_pid};
            PQfreemem(n);
            co_return out;
        }
        co_await s.conn->readable();
        if (PQconsumeInput(raw) == 0 || PQstatus(raw) == CONNECTION_BAD) {
            auto conn = std::move(s.conn);
            conn->lost("while listening");  // throws ConnectionLost; the next call reconnects
        }
    }
}

}  // namespace rivet::pg
