// The server that bench/framework/run.py measures: one answer reached four ways, so that what
// a framework feature costs per request shows against the plain route beside it.
//
//   GET /hello        a plain handler
//   GET /mw/hello     the same handler behind rivet::cors() and rivet::request_id()
//   GET /co/hello     a coroutine handler (rivet::Task<>) that ends without suspending
//   GET /co/wait      a coroutine that awaits rivet::sleep for ?ms=N (default 60000)
//   GET /co/waiting   how many /co/wait handlers are suspended now (run.py checks its waiters)
//
// Usage: framework_app [--port N] [--threads N] [--workers N]   (8080, 1, 1)
#include <rivet/async.hpp>
#include <rivet/cors.hpp>
#include <rivet/request_id.hpp>
#include <rivet/rivet.hpp>

#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

namespace {

constexpr std::string_view kHello = "Hello, World!";

void hello(rivet::Request&, rivet::Response& res) {
    res.text(kHello);
}

// /co/wait handlers suspended now. A guard, not a decrement after the co_await: a handler whose
// client goes away is destroyed at its suspension and never reaches the code after it.
std::atomic<long> g_waiting{0};

struct Waiting {
    Waiting() { g_waiting.fetch_add(1, std::memory_order_relaxed); }
    ~Waiting() { g_waiting.fetch_sub(1, std::memory_order_relaxed); }
    Waiting(const Waiting&) = delete;
    Waiting& operator=(const Waiting&) = delete;
};

long wait_ms(const rivet::Request& req) {
    auto ms = req.query("ms");
    if (!ms) return 60'000;
    long v = 0;
    auto [end, ec] = std::from_chars(ms->data(), ms->data() + ms->size(), v);
    if (ec != std::errc() || end != ms->data() + ms->size() || v < 0 || v > 3'600'000)
        throw rivet::HttpError(400, "ms must be a whole number of milliseconds, 0..3600000");
    return v;
}

bool parse_flag(const char* arg, const char* value, const char* name, unsigned& out) {
    if (std::strcmp(arg, name) != 0 || value == nullptr) return false;
    auto [end, ec] = std::from_chars(value, value + std::strlen(value), out);
    return ec == std::errc() && *end == '\0';
}

}  // namespace

int main(int argc, char** argv) {
    unsigned port = 8080, threads = 1, workers = 1;
    for (int i = 1; i < argc; i += 2) {
        const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
        if (!parse_flag(argv[i], value, "--port", port) &&
            !parse_flag(argv[i], value, "--threads", threads) &&
            !parse_flag(argv[i], value, "--workers", workers)) {
            std::fprintf(stderr, "usage: %s [--port N] [--threads N] [--workers N]\n", argv[0]);
            return 2;
        }
    }
    if (port > 65535 || threads == 0 || workers == 0) {
        std::fprintf(stderr, "port must be 0..65535, threads and workers at least 1\n");
        return 2;
    }

    rivet::App app;
    app.get("/hello", hello);
    app.use("/mw", rivet::cors());
    app.use("/mw", rivet::request_id());
    app.get("/mw/hello", hello);
    app.get("/co/hello", [](rivet::Request&, rivet::Response& res) -> rivet::Task<> {
        res.text(kHello);
        co_return;
    });
    app.get("/co/wait", [](rivet::Request& req, rivet::Response& res) -> rivet::Task<> {
        long ms = wait_ms(req);
        Waiting counted;
        co_await rivet::sleep(std::chrono::milliseconds(ms));
        res.text(kHello);
    });
    app.get("/co/waiting", [](rivet::Request&, rivet::Response& res) {
        res.text(std::to_string(g_waiting.load(std::memory_order_relaxed)));
    });

    rivet::RunOptions options;
    options.port = uint16_t(port);
    options.threads = threads;
    options.workers = workers;
    options.quiet = true;
    app.run(options);
    return 0;
}
