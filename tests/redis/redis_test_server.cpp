// The server of tests/e2e/test_redis.py: rivet::Redis behind HTTP routes, public API only.
//   redis_test_server PORT REDIS_PORT [THREADS] [COMMAND_TIMEOUT_MS]   (REDIS_PASSWORD: AUTH)
#include <rivet/rivet.hpp>

#include <cstdlib>
#include <string>

namespace {

// A reply as JSON, arrays nested: what the tests compare.
nlohmann::json to_json(const rivet::RedisReply& r) {
    using Kind = rivet::RedisReply::Kind;
    switch (r.kind) {
        case Kind::Nil:
            return nullptr;
        case Kind::Integer:
            return r.integer;
        case Kind::Array: {
            auto out = nlohmann::json::array();
            for (const auto& e : r.elements) out.push_back(to_json(e));
            return out;
        }
        case Kind::Error:
            return {{"error", r.text}};
        default:
            return r.text;
    }
}

// Redis unreachable: 503, as a lost database would be.
template <class Handler>
auto guarded(Handler handler) {
    return [handler](rivet::Request& req, rivet::Response& res) -> rivet::Task<> {
        try {
            co_await handler(req, res);
        } catch (const rivet::RedisUnavailable& e) {
            res.status(503).text(std::string("redis: ") + e.what());
        }
    };
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) return 2;
    const uint16_t port = uint16_t(std::stoul(argv[1]));
    const char* password = std::getenv("REDIS_PASSWORD");
    rivet::Redis redis({.host = "127.0.0.1",
                        .port = uint16_t(std::stoul(argv[2])),
                        .connect_timeout_ms = 2000,
                        .retry_ms = 200,
                        .command_timeout_ms = argc > 4 ? unsigned(std::stoul(argv[4])) : 2000,
                        .password = password ? password : ""});
    rivet::App app;
    app.get("/get/:key", guarded([&](rivet::Request& req, rivet::Response& res) -> rivet::Task<> {
                auto v = co_await redis.command("GET", req.param("key"));
                if (v.is_nil())
                    res.status(404).text("nil");
                else
                    res.text(v.text);
            }));
    app.put("/set/:key", guarded([&](rivet::Request& req, rivet::Response& res) -> rivet::Task<> {
                auto r = co_await redis.command("SET", req.param("key"), req.body());
                res.text(r.text);
            }));
    app.post("/incr/:key", guarded([&](rivet::Request& req, rivet::Response& res) -> rivet::Task<> {
                 auto r = co_await redis.command("INCR", req.param("key"));
                 if (r.is_error())
                     res.status(409).text(r.text);
                 else
                     res.text(std::to_string(r.integer));
             }));
    // EVAL with the script, the keys and the arguments as the JSON body's lists.
    app.post("/eval", guarded([&](rivet::Request& req, rivet::Response& res) -> rivet::Task<> {
                 auto in = req.json();
                 std::vector<std::string> words{"EVAL", in.at("script").get<std::string>()};
                 auto keys = in.value("keys", std::vector<std::string>{});
                 words.push_back(std::to_string(keys.size()));
                 words.insert(words.end(), keys.begin(), keys.end());
                 for (auto& a : in.value("args", std::vector<std::string>{})) words.push_back(a);
                 auto r = co_await redis.command(std::move(words));
                 res.json({{"reply", to_json(r)}});
             }));
    // Any command, its words as a JSON list: the raw reply as JSON.
    app.post("/command", guarded([&](rivet::Request& req, rivet::Response& res) -> rivet::Task<> {
                 auto r = co_await redis.command(req.json().get<std::vector<std::string>>());
                 res.json({{"reply", to_json(r)}});
             }));
    // Waits in Redis (BLPOP) up to SECONDS: the command a client leaves in the middle of.
    app.get("/wait/:list/:seconds",
            guarded([&](rivet::Request& req, rivet::Response& res) -> rivet::Task<> {
                auto r = co_await redis.command("BLPOP", req.param("list"), req.param("seconds"));
                res.json({{"reply", to_json(r)}});
            }));
    app.run(rivet::RunOptions{.host = "127.0.0.1",
                              .port = port,
                              .threads = argc > 3 ? unsigned(std::stoul(argv[3])) : 1,
                              .workers = 1});
}
