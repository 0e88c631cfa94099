// The rivet server of bench/pg_bench.py (`bash bench/run.sh --pg`), on the public API only, the
// way a user would write it; its Go twin is bench/peers/go_pg/main.go, route for route:
//
//   GET /hello              Hello, World!
//   GET /db                 one random row of World as {"id":..,"randomNumber":..} (prepared)
//   GET /queries?queries=N  N random rows (1..500) as a JSON array, sent as one pg::Batch of
//                           the prepared statement (libpq's pipeline mode: one round trip)
//   GET /sleep              select pg_sleep(0.2) on a pool of its own; answers "slept"
//   GET /fetch              GET --upstream with rivet::HttpClient (kept-alive pool); its body back
//
// Usage: pg_bench_server --port N --pg CONNINFO [--pool 4] [--sleep-pool 64] [--upstream URL]
//        [--threads 1]
#include <rivet/http_client.hpp>
#include <rivet/pg.hpp>
#include <rivet/rivet.hpp>

#include <charconv>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <string_view>

namespace pg = rivet::pg;

namespace {

constexpr const char* kWorldSql = "select id, randomnumber from world where id = $1";

// 1..10000, as TechEmpower asks; one generator per loop thread.
int random_id() {
    thread_local std::minstd_rand rng{std::random_device{}()};
    return int(rng() % 10000) + 1;
}

// TechEmpower's rule: a number clamped to 1..500, 1 when not a number.
int queries_param(const rivet::Request& req) {
    auto q = req.query("queries");
    int n = 0;
    if (!q || std::from_chars(q->data(), q->data() + q->size(), n).ec != std::errc() || n < 1)
        return 1;
    return n > 500 ? 500 : n;
}

nlohmann::json world_json(const pg::Row& row) {
    return {{"id", row.get<int>(0)}, {"randomNumber", row.get<int>(1)}};
}

struct Flags {
    unsigned port = 8080, threads = 1, pool = 4, sleep_pool = 64;
    std::string conninfo, upstream;
};

bool parse(int argc, char** argv, Flags& f) {
    for (int i = 1; i + 1 < argc; i += 2) {
        std::string_view name = argv[i];
        const char* v = argv[i + 1];
        auto number = [&](unsigned& out) {
            return std::from_chars(v, v + std::strlen(v), out).ec == std::errc();
        };
        bool ok = name == "--port"         ? number(f.port)
                  : name == "--threads"    ? number(f.threads)
                  : name == "--pool"       ? number(f.pool)
                  : name == "--sleep-pool" ? number(f.sleep_pool)
                  : name == "--pg"         ? (f.conninfo = v, true)
                  : name == "--upstream"   ? (f.upstream = v, true)
                                           : false;
        if (!ok) return false;
    }
    return argc % 2 == 1 && !f.conninfo.empty() && f.port <= 65535 && f.threads > 0;
}

}  // namespace

int main(int argc, char** argv) {
    Flags f;
    if (!parse(argc, argv, f)) {
        std::fprintf(stderr,
                     "usage: %s --port N --pg CONNINFO [--pool 4] [--sleep-pool 64] "
                     "[--upstream URL] [--threads 1]\n",
                     argv[0]);
        return 2;
    }
    // The load generator keeps up to a few hundred requests in flight: let them queue for a
    // connection rather than answer 503 (Go's pgxpool queues without a bound).
    pg::Pool db({.conninfo = f.conninfo, .max_connections = f.pool, .max_waiters = 4096});
    db.prepare("world", kWorldSql);
    pg::Pool sleeper(
        {.conninfo = f.conninfo, .max_connections = f.sleep_pool, .max_waiters = 4096});
    rivet::HttpClient client;

    rivet::App app;  // after the pools: it stops (and drops its waiting handlers) first
    app.get("/hello", [](rivet::Request&, rivet::Response& res) { res.text("Hello, World!"); });
    app.get("/db", [&](rivet::Request&, rivet::Response& res) -> rivet::Task<> {
        auto rows = co_await db.execute("world", random_id());
        res.json(world_json(rows.at(0)));
    });
    app.get("/queries", [&](rivet::Request& req, rivet::Response& res) -> rivet::Task<> {
        int n = queries_param(req);
        pg::Batch batch;
        for (int i = 0; i < n; ++i) batch.add_prepared("world", random_id());
        auto results = co_await db.pipeline(std::move(batch));
        nlohmann::json rows = nlohmann::json::array();
        for (const auto& r : results) rows.push_back(world_json(r.at(0)));
        res.json(rows);
    });
    app.get("/sleep", [&](rivet::Request&, rivet::Response& res) -> rivet::Task<> {
        co_await sleeper.query("select pg_sleep(0.2)");
        res.text("slept");
    });
    app.get("/fetch", [&](rivet::Request&, rivet::Response& res) -> rivet::Task<> {
        auto r = co_await client.get(f.upstream);
        if (r.status != 200) throw rivet::HttpError(502, "upstream: " + std::to_string(r.status));
        res.text(r.body);
    });

    rivet::RunOptions options;
    options.host = "127.0.0.1";
    options.port = uint16_t(f.port);
    options.threads = f.threads;
    options.workers = 1;
    options.quiet = true;
    app.run(options);
    return 0;
}
