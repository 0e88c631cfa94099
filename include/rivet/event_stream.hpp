// rivet::EventStream: Server-Sent Events (text/event-stream, the browser's EventSource) on a
// streamed response that waits between events (rivet/stream.hpp), so an open stream costs no
// CPU until something is sent.
//
//   app.get("/events", [&hub](rivet::Request& req, rivet::Response& res) {
//       rivet::EventStream events = rivet::event_stream(req, res);
//       hub.add(events);                     // keep the handle: send from any thread, later
//   });
//   events.send("tick", "42", "42");        // event "tick", data "42", id "42"
//
// The handle is a shared reference (copies name the same stream) and is thread-safe. Events
// queue in the handle and leave when the connection can take them; the stream ends with
// close(), when the client leaves, or when the server drains (its client then sees the end of
// the body, as after close()). on_close callbacks run once, on the stream's I/O loop.
//
// Backpressure: send() queues the event and returns false once the queue holds more than
// max_queued_bytes (as Node's write(): slow down, or drop what can be dropped); past
// max_queued_bytes_hard the client is too slow to keep: its connection is closed at once and
// the stream counted in rivet_event_streams_slow_closed_total.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include <rivet/request.hpp>
#include <rivet/response.hpp>

namespace rivet {

struct EventStreamOptions {
    // A comment line (":") after this long without anything sent, so that proxies and
    // clients see the connection alive; on the stream's loop timer. Zero: none.
    std::chrono::milliseconds heartbeat{15'000};
    size_t max_queued_bytes = 64 * 1024;         // send() says false past it
    size_t max_queued_bytes_hard = 1024 * 1024;  // past it the stream's connection closes
    std::chrono::milliseconds retry{0};          // > 0: sent first, the client's reconnection delay
};

// One event. Empty fields are left out (an empty `event` is the client's "message"; an empty
// `id` keeps the client's last one). Multi-line data becomes several `data:` lines. Line breaks
// in `event` and `id` are dropped (they would end the field).
struct ServerEvent {
    std::string_view data{};
    std::string_view event{};
    std::string_view id{};
    std::chrono::milliseconds retry{0};  // > 0: the client's new reconnection delay
};

namespace detail {
struct EventStreamState;
}

class EventStream {
public:
    EventStream() = default;  // a closed stream: sends nothing

    // Any thread. True: queued, and the queue is within max_queued_bytes. False: not queued
    // (the stream is closed) or queued past max_queued_bytes (open() tells which).
    bool send(std::string_view data);  // a "message" event
    bool send(std::string_view event, std::string_view data, std::string_view id = {});
    bool send(const ServerEvent& event);
    // A comment line (clients ignore it).
    bool comment(std::string_view text);
    // Ends the stream after what is queued. Any thread; later calls do nothing.
    void close();

    // Open: not closed, its client still there, the server not draining it.
    bool open() const;
    bool closed() const { return !open(); }
    // Runs `fn` once when the stream ends (whatever ended it), on its I/O loop; at once on this
    // thread if it has ended already. Replaces an earlier callback.
    void on_close(std::function<void()> fn);
    // The request's Last-Event-ID field: the id of the last event a reconnecting client saw.
    const std::string& last_event_id() const;
    size_t queued_bytes() const;
    // The handles name the same stream.
    bool operator==(const EventStream& other) const { return state_ == other.state_; }

private:
    friend EventStream event_stream(const Request&, Response&, EventStreamOptions);
    bool queue(std::string&& text, bool counts_as_event);
    std::shared_ptr<detail::EventStreamState> state_;
};

// Makes `res` the event stream's answer: 200, Content-Type: text/event-stream, Cache-Control:
// no-cache, X-Accel-Buffering: no (nginx must not buffer it), never compressed. Returns its
// handle. A HEAD request gets the head and a closed stream.
EventStream event_stream(const Request& req, Response& res, EventStreamOptions options = {});

}  // namespace rivet
