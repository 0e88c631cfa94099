// The server of tests/e2e/test_pg.py: rivet::pg's features behind HTTP routes, written on the
// public API only, as a user would.
//   pg_test_server PORT CONNINFO [MAX_CONNECTIONS [MAX_WAITERS [THREADS [STATEMENT_TIMEOUT_MS]]]]
// Expects a table: create table notes (id bigserial primary key, title text unique not null,
// body text).
#include <rivet/pg.hpp>
#include <rivet/rivet.hpp>

#include <string>

namespace pg = rivet::pg;

namespace {

nlohmann::json note_json(const pg::Row& row) {
    std::optional<std::string> body = row["body"].as<std::optional<std::string>>();
    return {{"id", row.get<int64_t>("id")},
            {"title", row["title"].as<std::string>()},
            {"body", body ? nlohmann::json(*body) : nlohmann::json(nullptr)}};
}

int64_t id_of(rivet::Request& req) {
    return std::stoll(std::string(req.param("id")));
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) return 2;
    pg::Options options{.conninfo = argv[2]};
    if (argc > 3) options.max_connections = std::stoul(argv[3]);
    if (argc > 4) options.max_waiters = std::stoul(argv[4]);
    unsigned threads = argc > 5 ? std::stoul(argv[5]) : 2;
    if (argc > 6) options.statement_timeout = std::chrono::milliseconds(std::stol(argv[6]));
    options.reconnect_backoff_max = std::chrono::milliseconds(500);
    pg::Pool db(options);  // before the app: it outlives every handler
    db.prepare("note_by_id", "select id, title, body from notes where id = $1");

    rivet::App app;
    app.post("/notes", [&](rivet::Request& req, rivet::Response& res) -> rivet::Task<> {
        auto in = req.json();
        std::optional<std::string> body;
        if (in.contains("body") && !in["body"].is_null()) body = in["body"].get<std::string>();
        try {
            auto rows = co_await db.query(
                "insert into notes (title, body) values ($1, $2) returning id, title, body",
                in.at("title").get<std::string>(), body);
            res.status(201).json(note_json(rows[0]));
        } catch (const pg::UniqueViolation& e) {
            throw rivet::HttpError(409, "a note with this title exists");
        }
    });
    app.get("/notes/:id", [&](rivet::Request& req, rivet::Response& res) -> rivet::Task<> {
        auto rows = co_await db.execute("note_by_id", id_of(req));
        if (rows.empty()) throw rivet::HttpError(404, "no such note");
        res.json(note_json(rows[0]));
    });
    app.put("/notes/:id", [&](rivet::Request& req, rivet::Response& res) -> rivet::Task<> {
        auto in = req.json();
        auto r = co_await db.query("update notes set body = $2 where id = $1", id_of(req),
                                   in.at("body").get<std::string>());
        if (r.affected_rows() == 0) throw rivet::HttpError(404, "no such note");
        res.json({{"updated", r.affected_rows()}});
    });
    app.del("/notes/:id", [&](rivet::Request& req, rivet::Response& res) -> rivet::Task<> {
        auto r = co_await db.query("delete from notes where id = $1", id_of(req));
        if (r.affected_rows() == 0) throw rivet::HttpError(404, "no such note");
        res.status(204);
    });
    app.get("/count", [&](rivet::Request&, rivet::Response& res) -> rivet::Task<> {
        auto rows = co_await db.query("select count(*) from notes");
        res.json({{"count", rows[0].get<int64_t>(0)}});
    });
    app.get("/types", [&](rivet::Request&, rivet::Response& res) -> rivet::Task<> {
        auto rows = co_await db.query(
            "select $1::int8 as big, $2::text as txt, null::int as nothing, $3::bool as yes, "
            "$4::float8 as half",
            int64_t{9007199254740993}, "héllo", true, 0.5);
        const pg::Row row = rows[0];
        res.json({{"big", row.get<int64_t>("big")},
                  {"txt", row["txt"].as<std::string>()},
                  {"nothing_is_null", row["nothing"].is_null()},
                  {"nothing_opt", row["nothing"].as<std::optional<int>>().has_value()},
                  {"yes", row.get<bool>(3)},
                  {"half", row.get<double>(4)},
                  {"columns", rows.columns()}});
    });
    // Runs pg_sleep(s): a client that leaves meanwhile must get the statement cancelled.
    app.get("/sleep", [&](rivet::Request& req, rivet::Response& res) -> rivet::Task<> {
        std::string s = req.query("s").value_or("1");
        co_await db.query("select pg_sleep($1::float8) /* rivet-pg-sleep */", s);
        res.text("slept");
    });
    // A deadline around one query: TimeoutError (504), the statement cancelled on the server.
    app.get("/sleep-deadline", [&](rivet::Request&, rivet::Response& res) -> rivet::Task<> {
        co_await rivet::with_timeout(db.query("select pg_sleep(60) /* rivet-pg-sleep */"),
                                     std::chrono::milliseconds(300));
        res.text("slept");
    });
    // mode=commit | rollback | throw (the Transaction is destroyed uncommitted)
    app.post("/pair", [&](rivet::Request& req, rivet::Response& res) -> rivet::Task<> {
        auto in = req.json();
        std::string mode = req.query("mode").value_or("commit");
        auto tx = co_await db.transaction();
        co_await tx.query("insert into notes (title) values ($1)", in.at("a").get<std::string>());
        co_await tx.execute("note_by_id", 0);  // a prepared statement inside it
        co_await tx.query("insert into notes (title) values ($1)", in.at("b").get<std::string>());
        if (mode == "throw") throw rivet::HttpError(422, "thrown inside the transaction");
        if (mode == "rollback")
            co_await tx.rollback();
        else
            co_await tx.commit();
        res.json({{"mode", mode}});
    });
    app.get("/pipeline", [&](rivet::Request& req, rivet::Response& res) -> rivet::Task<> {
        int n = std::stoi(req.query("n").value_or("10"));
        pg::Batch batch;
        for (int i = 0; i < n; ++i) batch.add("select $1::int * 2, pg_backend_pid()", i);
        auto results = co_await db.pipeline(std::move(batch));
        nlohmann::json doubled = nlohmann::json::array(), pids = nlohmann::json::array();
        for (auto& r : results) {
            doubled.push_back(r[0].get<int>(0));
            pids.push_back(r[0].get<int>(1));
        }
        res.json({{"doubled", doubled}, {"pids", pids}});
    });
    app.get("/pipeline-error", [&](rivet::Request&, rivet::Response& res) -> rivet::Task<> {
        pg::Batch batch;
        batch.add("select 1").add("select 1/0").add("select 3");
        try {
            co_await db.pipeline(std::move(batch));
            res.json({{"error", nullptr}});
        } catch (const pg::Error& e) {
            res.json({{"error", e.sqlstate()}});
        }
    });
    app.get("/listen", [&](rivet::Request& req, rivet::Response& res) -> rivet::Task<> {
        auto listener = db.listen({req.query("channel").value_or("feed")});
        auto n = co_await listener.next();
        res.json({{"channel", n.channel}, {"payload", n.payload}, {"pid", n.backend_pid}});
    });
    app.post("/notify", [&](rivet::Request& req, rivet::Response& res) -> rivet::Task<> {
        std::string payload(req.body());
        co_await db.query("select pg_notify($1, $2)", req.query("channel").value_or("feed"),
                          payload);
        res.text("sent");
    });
    app.get("/stats", [&](rivet::Request&, rivet::Response& res) {
        pg::PoolStats s = db.stats();
        res.json(
            {{"open", s.open}, {"idle", s.idle}, {"waiting", s.waiting}, {"cleaning", s.cleaning}});
    });
    app.get("/sqlstate", [&](rivet::Request& req, rivet::Response& res) -> rivet::Task<> {
        try {
            co_await db.query(req.query("sql").value_or("select"));
            res.json({{"sqlstate", ""}});
        } catch (const pg::Error& e) {
            res.json({{"sqlstate", e.sqlstate()}, {"message", e.what()}});
        }
    });

    rivet::RunOptions run{.host = "127.0.0.1",
                          .port = uint16_t(std::stoi(argv[1])),
                          .threads = threads,
                          .workers = 1};
    app.run(run);
}
