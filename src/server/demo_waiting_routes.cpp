// The demo endpoints whose handlers wait without holding their I/O loop (rivet/async.hpp):
//   GET /wait?ms=200    a coroutine awaiting a timer on its loop
//   GET /cpu?ms=50      a coroutine awaiting ms of CPU work on the worker pool
//   GET /later?ms=200   the callback form: an AsyncReply answered from a loop timer
//   GET /hello-task     /hello as a coroutine that never waits (the fast path, for benchmarks)
//   POST /upload        a streamed body (rivet/body_stream.hpp): its size and CRC-32, in
//                       bounded memory whatever its size
#include <time.h>
#include <zlib.h>

#include <chrono>
#include <cstdio>

#include <rivet/async.hpp>
#include <rivet/body_stream.hpp>

#include "server/demo_routes.hpp"
#include "server/number_input.hpp"

namespace rivet::server {

namespace {

constexpr uint64_t kDefaultWaitMs = 200;
constexpr uint64_t kMaxWaitMs = 60'000;
constexpr uint64_t kDefaultCpuMs = 50;
constexpr uint64_t kMaxCpuMs = 10'000;
constexpr uint64_t kMaxUploadBytes = uint64_t(16) << 30;  // 16 GiB: streamed, never held

// ?ms= within [0, max]; throws HttpError(400) otherwise.
uint64_t millis(const Request& req, uint64_t fallback, uint64_t max) {
    auto text = req.query("ms");
    if (!text) return fallback;
    auto parsed = parse_count(*text, max, "ms");
    if (!parsed.value) throw HttpError(400, parsed.error);
    return *parsed.value;
}

uint64_t thread_cpu_ns() {
    timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return uint64_t(t.tv_sec) * 1'000'000'000 + uint64_t(t.tv_nsec);
}

// Burns `ms` of this thread's CPU time (not wall time: a busy machine stretches it, it does not
// shorten the work).
uint64_t burn_cpu(uint64_t ms) {
    const uint64_t until = thread_cpu_ns() + ms * 1'000'000;
    volatile uint64_t acc = 0;
    uint64_t rounds = 0;
    while (thread_cpu_ns() < until) {
        for (int i = 0; i < 10'000; ++i) acc = acc + uint64_t(i) * 2654435761u;
        ++rounds;
    }
    return rounds;
}

Task<> wait_handler(Request& req, Response& res) {
    const uint64_t ms = millis(req, kDefaultWaitMs, kMaxWaitMs);
    const auto start = std::chrono::steady_clock::now();
    co_await sleep(std::chrono::milliseconds(ms));
    auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - start);
    res.json({{"waited_ms", waited.count()}, {"asked_ms", ms}});
}

Task<> cpu_handler(Request& req, Response& res) {
    const uint64_t ms = millis(req, kDefaultCpuMs, kMaxCpuMs);
    uint64_t rounds = co_await on_workers([ms] { return burn_cpu(ms); });
    res.json({{"cpu_ms", ms}, {"rounds", rounds}, {"tag", std::string(req.query_string())}});
}

void later_handler(Request& req, AsyncReply reply) {
    const uint64_t ms = millis(req, kDefaultWaitMs, kMaxWaitMs);
    EventLoop::current()->call_after(std::chrono::milliseconds(ms),
                                     [ms, r = std::make_shared<AsyncReply>(std::move(reply))] {
                                         Response res;
                                         res.json({{"later_ms", ms}});
                                         r->send(std::move(res));
                                     });
}

// Reads the body piece by piece as it arrives: the server never holds more than a piece of it.
Task<> upload_handler(Request& req, Response& res) {
    BodyStream body = req.body_stream();
    uLong crc = crc32(0, nullptr, 0);
    while (auto piece = co_await body.next())
        crc = crc32_z(crc, reinterpret_cast<const Bytef*>(piece->data()), piece->size());
    char hex[9];
    std::snprintf(hex, sizeof hex, "%08lx", crc);
    res.json({{"bytes", body.received()}, {"crc32", hex}});
}

}  // namespace

void add_waiting_routes(App& app) {
    app.get("/hello-task", [](Request&, Response& res) -> Task<> {
        res.text("Hello, World!");
        co_return;
    });
    app.get("/wait", wait_handler);
    app.get("/cpu", cpu_handler);
    app.get("/later", later_handler);
    app.post("/upload", upload_handler).stream_body().max_body(kMaxUploadBytes);
}

}  // namespace rivet::server
