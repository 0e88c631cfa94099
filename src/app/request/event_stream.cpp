// rivet::EventStream (rivet/event_stream.hpp): a queue of formatted events shared by the handle
// (any thread) and the stream's producer (the connection's loop), which takes the whole queue
// at each call and says Waiting when it is empty.
#include <rivet/event_loop.hpp>
#include <rivet/event_stream.hpp>

#include <mutex>

#include "app/async/loop_services.hpp"
#include "app/operations/metrics.hpp"

namespace rivet {

namespace detail {

struct EventStreamState {
    EventStreamOptions options;
    std::string last_event_id;

    mutable std::mutex mutex;
    std::string queue;           // formatted, not yet taken by the connection
    uint64_t queued_events = 0;  // events in `queue` (the metrics count them when taken)
    bool closing = false;        // close(): end after the queue
    bool ended = false;          // the connection let go of the stream, or it was too slow
    bool slow = false;           // ended past max_queued_bytes_hard
    bool started = false;        // the producer ran (on the loop): counted as open
    bool sent_since_beat = false;
    StreamWaker waker;  // from the producer's first call
    std::function<void()> on_close;

    // Known once started; used on the loop.
    EventLoop* loop = nullptr;
    app::Metrics* metrics = nullptr;
    TimerHandle beat;

    StreamStatus produce(std::string& out, const StreamWaker& w,
                         const std::shared_ptr<EventStreamState>& self);
    void ended_by_connection();
    void arm_heartbeat(const std::shared_ptr<EventStreamState>& self);
};

namespace {

void drop_line_breaks(std::string& out, std::string_view text) {
    for (char c : text)
        if (c != '\n' && c != '\r' && c != '\0') out += c;
}

std::string format(const ServerEvent& e) {
    std::string out;
    out.reserve(e.data.size() + e.event.size() + e.id.size() + 32);
    if (!e.id.empty()) {
        out += "id: ";
        drop_line_breaks(out, e.id);
        out += '\n';
    }
    if (!e.event.empty()) {
        out += "event: ";
        drop_line_breaks(out, e.event);
        out += '\n';
    }
    if (e.retry.count() > 0) out += "retry: " + std::to_string(e.retry.count()) + "\n";
    // Every line of the data is a data: field (CRLF, LF and CR each end a line).
    size_t pos = 0;
    for (;;) {
        size_t end = e.data.find_first_of("\r\n", pos);
        out += "data: ";
        out.append(e.data.substr(pos, end == std::string_view::npos ? end : end - pos));
        out += '\n';
        if (end == std::string_view::npos) break;
        pos = end + 1;
        if (e.data[end] == '\r' && pos < e.data.size() && e.data[pos] == '\n') ++pos;
    }
    out += '\n';  // dispatches the event
    return out;
}

// A `self` that stays alive while the producer exists: when the connection drops the producer,
// the stream is over.
struct ProducerGuard {
    std::shared_ptr<EventStreamState> state;
    ~ProducerGuard() {
        if (state) state->ended_by_connection();
    }
};

}  // namespace

StreamStatus EventStreamState::produce(std::string& out, const StreamWaker& w,
                                       const std::shared_ptr<EventStreamState>& self) {
    bool first = false;
    uint64_t events;
    StreamStatus status = StreamStatus::Waiting;
    {
        std::lock_guard lock(mutex);
        if (!started) {
            started = first = true;
            waker = w;
            loop = EventLoop::current();
            if (loop) metrics = detail::LoopAccess::services(*loop).metrics;
        }
        if (slow) {
            // Too slow before the connection first asked (the handler sent past the bound):
            // cut, as later ones are.
            w.abort();
            return StreamStatus::Waiting;
        }
        out.swap(queue);  // `out` arrives empty: the queue's buffer goes, a fresh one stays
        events = std::exchange(queued_events, 0);
        if (ended || closing) status = StreamStatus::Done;
    }
    if (metrics) {
        const unsigned index = loop->index();
        if (first) metrics->count_event_stream_opened(index);
        if (events) metrics->count_events_sent(index, events);
    }
    if (first && status == StreamStatus::Waiting) arm_heartbeat(self);
    return status;
}

void EventStreamState::arm_heartbeat(const std::shared_ptr<EventStreamState>& self) {
    if (!loop || options.heartbeat.count() <= 0) return;
    std::weak_ptr<EventStreamState> weak = self;
    TimerHandle t = loop->call_after(options.heartbeat, [weak] {
        auto s = weak.lock();
        if (!s) return;
        StreamWaker w;
        {
            std::lock_guard lock(s->mutex);
            if (s->ended || s->closing) return;
            if (!s->sent_since_beat) s->queue += ":\n\n";
            s->sent_since_beat = false;
            w = s->waker;
        }
        w.wake();
        s->arm_heartbeat(s);
    });
    std::lock_guard lock(mutex);
    beat = t;
}

void EventStreamState::ended_by_connection() {
    std::function<void()> fn;
    TimerHandle timer;
    bool was_started, was_slow;
    {
        std::lock_guard lock(mutex);
        ended = true;
        fn = std::move(on_close);
        timer = beat;
        was_started = started;
        was_slow = slow;
        queue.clear();
        queued_events = 0;
    }
    // Only on the loop: off it (a loop that never ran) the timer finds the stream ended.
    if (timer && loop && loop->on_this_thread()) timer.cancel();
    if (was_started && metrics) metrics->count_event_stream_closed(loop->index(), was_slow);
    if (fn) fn();
}

}  // namespace detail

bool EventStream::queue(std::string&& text, bool counts_as_event) {
    if (!state_) return false;
    auto& s = *state_;
    StreamWaker w;
    bool within, too_slow = false;
    {
        std::lock_guard lock(s.mutex);
        if (s.ended || s.closing) return false;
        if (s.queue.size() + text.size() > s.options.max_queued_bytes_hard) {
            // The client reads far slower than it is sent to: it is let go, not waited for.
            s.slow = too_slow = true;
            s.ended = true;
            s.queue.clear();
            s.queued_events = 0;
            w = s.waker;
            within = false;
        } else {
            s.queue += text;
            if (counts_as_event) ++s.queued_events;
            s.sent_since_beat = true;
            within = s.queue.size() <= s.options.max_queued_bytes;
            w = s.waker;
        }
    }
    if (too_slow)
        w.abort();
    else
        w.wake();
    return within;
}

bool EventStream::send(std::string_view data) {
    return send(ServerEvent{data});
}

bool EventStream::send(std::string_view event, std::string_view data, std::string_view id) {
    return send(ServerEvent{data, event, id});
}

bool EventStream::send(const ServerEvent& event) {
    return queue(detail::format(event), true);
}

bool EventStream::comment(std::string_view text) {
    std::string out;
    size_t pos = 0;
    for (;;) {
        size_t end = text.find_first_of("\r\n", pos);
        out += ": ";
        out.append(text.substr(pos, end == std::string_view::npos ? end : end - pos));
        out += '\n';
        if (end == std::string_view::npos) break;
        pos = end + 1;
    }
    return queue(std::move(out), false);
}

void EventStream::close() {
    if (!state_) return;
    StreamWaker w;
    {
        std::lock_guard lock(state_->mutex);
        if (state_->ended || state_->closing) return;
        state_->closing = true;
        w = state_->waker;
    }
    w.wake();
}

bool EventStream::open() const {
    if (!state_) return false;
    std::lock_guard lock(state_->mutex);
    return !state_->ended && !state_->closing && !(state_->waker && state_->waker.closed());
}

void EventStream::on_close(std::function<void()> fn) {
    if (!state_) return;
    {
        std::lock_guard lock(state_->mutex);
        if (!state_->ended) {
            state_->on_close = std::move(fn);
            return;
        }
    }
    if (fn) fn();
}

const std::string& EventStream::last_event_id() const {
    static const std::string kNone;
    return state_ ? state_->last_event_id : kNone;
}

size_t EventStream::queued_bytes() const {
    if (!state_) return 0;
    std::lock_guard lock(state_->mutex);
    return state_->queue.size();
}

EventStream event_stream(const Request& req, Response& res, EventStreamOptions options) {
    auto state = std::make_shared<detail::EventStreamState>();
    state->options = options;
    state->last_event_id.assign(req.header("Last-Event-ID"));
    if (options.retry.count() > 0)
        state->queue = "retry: " + std::to_string(options.retry.count()) + "\n\n";
    auto guard = std::make_shared<detail::ProducerGuard>();  // made in place: one destructor
    guard->state = state;
    res.status(200);
    res.stream(
        [guard](std::string& out, const StreamWaker& waker) {
            return guard->state->produce(out, waker, guard->state);
        },
        "text/event-stream");
    res.header("Cache-Control", "no-cache");
    res.header("X-Accel-Buffering", "no");
    EventStream handle;
    handle.state_ = std::move(state);
    return handle;
}

}  // namespace rivet
