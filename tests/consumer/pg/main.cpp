// rivet::pg as its users get it: the headers, the library and libpq found and linked. It runs
// no query (no server here): it makes a pool and parameters, and links every entry point.
#include <rivet/pg.hpp>
#include <rivet/rivet.hpp>

#include <cstdio>

int main() {
    rivet::pg::Pool db({.conninfo = "host=/nonexistent", .max_connections = 2});
    db.prepare("one", "select $1::int");
    auto params = rivet::pg::Params::of(1, "two", std::nullopt, 4.5);
    rivet::pg::Batch batch;
    batch.add("select 1").add("select $1", 2);
    rivet::App app;
    app.get("/", [&](rivet::Request&, rivet::Response& res) -> rivet::Task<> {
        auto rows = co_await db.execute("one", 1);
        auto tx = co_await db.transaction();
        co_await tx.commit();
        res.json({{"n", rows[0].get<int>(0)}});
    });
    bool ok = params.values().size() == 4 && !params.values()[2] && batch.size() == 2;
    std::printf("pg consumer: %s\n", ok ? "ok" : "wrong");
    return ok ? 0 : 1;
}
