// Streamed response bodies that wait (Response::stream with a WaitingProducer): the producer
// says what it has, and when it has nothing yet it returns Waiting and is not called again
// until someone calls wake() on its StreamWaker, from the loop or from any thread.
//
//   res.stream([state](std::string& out, const rivet::StreamWaker& waker) {
//       state->keep(waker);                       // whoever has the next piece calls wake()
//       if (state->take(out)) return rivet::StreamStatus::More;
//       return state->done() ? rivet::StreamStatus::Done : rivet::StreamStatus::Waiting;
//   }, "text/plain");
//
// While it waits a stream costs no CPU and no timer: only the client leaving (its connection
// closes: closed() turns true and wake() does nothing) or the server's drain ends it. A drain
// ends a waiting stream at once (its client sees the end of the body), and one that is sending
// when it next says Waiting.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace rivet {

namespace engine {
struct StreamLink;  // the engine's side of a waker (private)
}
namespace detail {
struct WakerAccess;
}

enum class StreamStatus : uint8_t {
    More,     // what was appended is sent; call again now
    Waiting,  // what was appended (maybe nothing) is sent; call again after a wake()
    Done,     // the body ends with what was appended
};

// Names one stream; copies name the same one. Valid from the producer's first call (the one it
// is given); a default-made waker is closed and wakes nothing.
class StreamWaker {
public:
    StreamWaker() = default;
    // Any thread: the producer is called again soon on its loop. Wakes before it runs make one
    // call; a wake while it is being called makes it run again after it says Waiting.
    void wake() const;
    // Any thread: the connection closes at once, what is unsent is dropped (a client too slow
    // to keep up). Does nothing once closed.
    void abort() const;
    // The stream ended or its connection closed: the client left, a timeout, the drain.
    bool closed() const;
    explicit operator bool() const { return link_ != nullptr; }

private:
    friend struct detail::WakerAccess;
    std::shared_ptr<engine::StreamLink> link_;
};

using WaitingProducer = std::function<StreamStatus(std::string& out, const StreamWaker& waker)>;

}  // namespace rivet
