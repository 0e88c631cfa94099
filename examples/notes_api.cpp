// A notes service on PostgreSQL, as a new user would write it with rivet: CRUD (writes need a
// bearer token), each new or changed text checked first by another HTTP service, and a live feed
// of every change made to the table, by this instance, another one or psql: a trigger NOTIFYs,
// a background task LISTENs and publishes to the WebSocket subscribers of every loop.
//
//   ./build/example_notes_api PORT CONNINFO TOKEN CHECK_URL
//   ./build/example_notes_api 8080 'host=/tmp dbname=notes' secret http://127.0.0.1:9000/check
//   curl -H 'Authorization: Bearer secret' -d '{"text":"buy milk"}' localhost:8080/notes
//   curl localhost:8080/notes          curl localhost:8080/notes/1
//   websocat ws://localhost:8080/feed  ({"type":"insert","id":1} for each change)
//
// The checker gets the text as a POST body: 2xx accepts it, 422 refuses it (its body says why,
// and so does our 422); it has 2 s (then 504), and a checker that cannot be reached is a 502.
#include <rivet/http_client.hpp>
#include <rivet/pg.hpp>
#include <rivet/rivet.hpp>

#include <atomic>
#include <optional>
#include <string>

using namespace std::chrono_literals;
using rivet::HttpError, rivet::Request, rivet::Response, rivet::Task;
namespace pg = rivet::pg;

const char* const kSchema[] = {
    "create table if not exists notes (id bigserial primary key, text text not null, "
    "created_at timestamptz not null default now())",
    "create or replace function notes_changed() returns trigger language plpgsql as $$ begin "
    "perform pg_notify('notes', json_build_object('type', lower(tg_op), "
    "'id', coalesce(new.id, old.id))::text); return null; end $$",
    "create or replace trigger notes_changed after insert or update or delete on notes "
    "for each row execute function notes_changed()",
};

// In the background on one loop: the schema, then every change to the feed, for ever.
Task<> feed(pg::Pool& db, rivet::App& app, std::atomic<bool>& ready) {
    for (const char* sql : kSchema) co_await db.query(sql);
    auto listener = db.listen({"notes"});
    co_await listener.start();
    ready = true;
    for (;;) {
        std::optional<pg::Notification> change;
        try {
            change = co_await listener.next();
        } catch (const pg::Unavailable&) {  // the database went away: next() listens again
        }
        if (change)
            app.publish("notes", change->payload);
        else
            co_await rivet::sleep(1s);
    }
}

Task<> check(const std::string& url, std::string text) {
    // Named, not temporaries inside the co_await: GCC 12 destroys those twice.
    rivet::HttpClient client;
    rivet::ClientRequest post{.method = "POST", .url = url, .body = std::move(text)};
    auto sent = rivet::with_timeout(client.send(std::move(post)), 2s);  // 504 past it
    rivet::ClientResponse r;
    try {
        r = co_await std::move(sent);
    } catch (const rivet::HttpClientError& e) {
        throw HttpError(502, std::string("the checker cannot be reached: ") + e.what());
    }
    if (r.status == 422) throw HttpError(422, "refused by the checker: " + r.body);
    if (r.status / 100 != 2)
        throw HttpError(502, "the checker answered " + std::to_string(r.status));
}

std::string text_of(const Request& req) {
    auto body = req.json();  // not JSON: 400
    if (!body.is_object() || !body.contains("text") || !body["text"].is_string() ||
        body["text"].get<std::string>().empty())
        throw HttpError(400, "the body must be {\"text\": \"...\"}");
    return body["text"];
}

int main(int argc, char** argv) {
    if (argc != 5) {
        std::fprintf(stderr, "usage: %s PORT CONNINFO TOKEN CHECK_URL\n", argv[0]);
        return 2;
    }
    const std::string bearer = std::string("Bearer ") + argv[3], checker = argv[4];
    pg::Pool db({.conninfo = argv[2], .max_connections = 8});
    rivet::App app;  // after the pool: the app and its waiting handlers end first
    std::atomic<bool> ready = false;

    auto open = [&] {  // the schema is made by feed(), at start
        if (!ready) throw HttpError(503, "starting").header("Retry-After", "1");
    };
    auto writer = [&](const Request& req) {
        open();
        if (req.header("Authorization") != bearer)
            throw HttpError(401, "a valid bearer token is required")
                .header("WWW-Authenticate", "Bearer");
    };
    auto one = [](Response& res, const pg::Result& r) {
        if (r.empty()) throw HttpError(404, "no such note");
        res.body(r[0].get<std::string>(0), "application/json");
    };
    app.get("/notes", [&](Request&, Response& res) -> Task<> {
        open();
        one(res,
            co_await db.query("select coalesce(json_agg(n order by id), '[]')::text from notes n"));
    });
    app.get("/notes/:id<int>", [&](Request& req, Response& res) -> Task<> {
        open();
        one(res, co_await db.query("select row_to_json(n)::text from notes n where id = $1",
                                   *req.param_as<int64_t>("id")));
    });
    app.post("/notes", [&](Request& req, Response& res) -> Task<> {
        writer(req);
        std::string text = text_of(req);
        co_await check(checker, text);
        res.status(201);
        one(res,
            co_await db.query(
                "insert into notes (text) values ($1) returning row_to_json(notes)::text", text));
    });
    app.put("/notes/:id<int>", [&](Request& req, Response& res) -> Task<> {
        writer(req);
        std::string text = text_of(req);
        co_await check(checker, text);
        one(res, co_await db.query(
                     "update notes set text = $2 where id = $1 returning row_to_json(notes)::text",
                     *req.param_as<int64_t>("id"), text));
    });
    app.del("/notes/:id<int>", [&](Request& req, Response& res) -> Task<> {
        writer(req);
        auto r = co_await db.query("delete from notes where id = $1", *req.param_as<int64_t>("id"));
        if (r.affected_rows() == 0) throw HttpError(404, "no such note");
        res.status(204);
    });
    app.ws("/feed", {.on_open = [](rivet::WebSocket& ws) { ws.subscribe("notes"); }});

    app.run({.port = uint16_t(std::stoi(argv[1])),
             .on_started = [&] { rivet::spawn(app.loop(0), feed(db, app, ready)); }});
}
