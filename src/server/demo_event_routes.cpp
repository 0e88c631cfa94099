// The demo's pushed answers (rivet/event_stream.hpp, rivet/stream.hpp):
//   GET /events            Server-Sent Events: a `tick` event every second, ids counting up
//                          (a reconnecting client's Last-Event-ID resumes the count), and
//                          what is published to the topic "chat" (App::subscribe).
//                          For tests: ?every=MS (10..60000), ?limit=N (the stream ends after N
//                          ticks; EventSource then reconnects), ?size=BYTES (pads each tick's
//                          data), ?retry=MS (the client's reconnection delay).
//   GET /stream/waiting    a streamed body whose producer waits: ?parts=N pieces, one every
//                          ?ms=M, each made on a thread of its own that wakes the stream; the
//                          last line counts the producer's calls (at most two per wake).
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include <rivet/event_loop.hpp>
#include <rivet/event_stream.hpp>
#include <rivet/http_error.hpp>
#include <rivet/stream.hpp>

#include "server/demo_routes.hpp"
#include "server/number_input.hpp"

namespace rivet::server {

namespace {

uint64_t query_count(const Request& req, std::string_view name, uint64_t fallback, uint64_t min,
                     uint64_t max) {
    auto text = req.query(name);
    if (!text) return fallback;
    auto parsed = parse_count(*text, max, name);
    if (!parsed.value) throw HttpError(400, parsed.error);
    if (*parsed.value < min) throw HttpError(400, std::string(name) + " is below its minimum");
    return *parsed.value;
}

// One /events stream's ticks, on its loop's timer.
struct Ticker : std::enable_shared_from_this<Ticker> {
    EventStream events;
    EventLoop* loop = nullptr;
    std::chrono::milliseconds every{1000};
    uint64_t next = 1;
    uint64_t left = 0;  // ticks before the stream ends; 0: no end
    size_t size = 0;    // pad the data to this many bytes
    TimerHandle timer;

    void arm() {
        timer = loop->call_after(every, [self = shared_from_this()] { self->tick(); });
    }
    void tick() {
        if (!events.open()) return;
        std::string id = std::to_string(next++);
        std::string data = id;
        if (data.size() < size) data.append(size - data.size(), '.');
        events.send("tick", data, id);
        if (left && --left == 0) return events.close();
        arm();
    }
};

void events_handler(App& app, Request& req, Response& res) {
    auto t = std::make_shared<Ticker>();
    t->every = std::chrono::milliseconds(query_count(req, "every", 1000, 10, 60'000));
    t->left = query_count(req, "limit", 0, 0, 1'000'000);
    t->size = query_count(req, "size", 0, 0, 64 * 1024);
    EventStreamOptions options;
    options.retry = std::chrono::milliseconds(query_count(req, "retry", 0, 0, 60'000));
    t->loop = EventLoop::current();
    t->events = event_stream(req, res, options);
    // Resume after the last id the client saw, when it says one (a reconnect).
    auto last = parse_count(t->events.last_event_id(), uint64_t(1) << 62, "Last-Event-ID");
    if (last.value) t->next = *last.value + 1;
    std::weak_ptr<Ticker> weak = t;
    t->events.on_close([weak] {
        if (auto ticker = weak.lock()) ticker->timer.cancel();
    });
    app.subscribe("chat", t->events);
    t->arm();
}

// A stream fed from another thread: each piece is handed over under a lock, then the stream
// is woken; the producer takes what is there and waits again.
struct Pieces {
    std::mutex mutex;
    std::string ready;
    bool done = false;
    uint64_t calls = 0;
    StreamWaker waker;  // from the producer's first call
};

void waiting_stream_handler(Request& req, Response& res) {
    const uint64_t parts = query_count(req, "parts", 3, 0, 1000);
    const uint64_t ms = query_count(req, "ms", 100, 0, 10'000);
    if (parts * ms > 60'000) throw HttpError(400, "parts * ms is over a minute");
    auto pieces = std::make_shared<Pieces>();
    std::thread([pieces, parts, ms] {
        for (uint64_t i = 1; i <= parts + 1; ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(ms));
            StreamWaker w;
            {
                std::lock_guard lock(pieces->mutex);
                if (i <= parts)
                    pieces->ready += "part " + std::to_string(i) + "\n";
                else
                    pieces->done = true;
                w = pieces->waker;
            }
            if (w && w.closed()) return;  // the client left
            w.wake();
        }
    }).detach();
    res.stream(
        [pieces](std::string& out, const StreamWaker& waker) {
            std::lock_guard lock(pieces->mutex);
            ++pieces->calls;
            if (!pieces->waker) pieces->waker = waker;
            out.swap(pieces->ready);
            if (!pieces->done) return StreamStatus::Waiting;
            out += "calls " + std::to_string(pieces->calls) + "\n";
            return StreamStatus::Done;
        },
        "text/plain");
}

}  // namespace

void add_event_routes(App& app) {
    app.get("/events", [&app](Request& req, Response& res) { events_handler(app, req, res); });
    app.get("/stream/waiting", waiting_stream_handler);
}

}  // namespace rivet::server
