// Streamed response bodies that can wait. A producer appends the next piece of the body and says
// whether more follows at once (More), nothing is ready yet (Waiting) or the body ended (Done).
// While it waits the session never calls it and asks epoll for nothing on its behalf; whoever
// has the next piece calls StreamWaker::wake(), from any thread, and the session pumps again on
// its loop. The waker holds a StreamLink shared with the session, never the connection: the
// session clears the link when the stream ends or the connection closes, and a wake after that
// does nothing.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

namespace rivet::engine {

class IoThread;

enum class Produced : uint8_t {
    More,     // call again now: more follows
    Waiting,  // nothing more yet (what was appended is sent): call again after a wake()
    Done,     // the body ended (what was appended is its last piece)
};

// What a stream's wakers and its session share.
struct StreamLink {
    // Set by the session when the stream starts, cleared (under the mutex) when it ends or the
    // connection closes: a waker posts to `thread` only while it is set, so the loop it posts
    // to outlives the post.
    std::mutex mutex;
    IoThread* thread = nullptr;
    int fd = -1;
    uint64_t connection_id = 0;
    std::atomic<bool> closed{false};         // the stream ended, or its connection closed
    std::atomic<bool> woken{false};          // a wake() since the session last looked
    std::atomic<bool> resume_posted{false};  // a resume task is on its way: one is enough
    std::atomic<bool> aborted{false};        // abort(): the connection closes when it resumes
};

class StreamWaker {
public:
    StreamWaker() = default;
    explicit StreamWaker(std::shared_ptr<StreamLink> link) : link_(std::move(link)) {}

    // Any thread: the producer is called again soon, on its loop (in place when called on that
    // loop outside any connection's event, else through the loop's task queue). Several wakes
    // before the producer runs make one call. Does nothing once the stream is closed.
    void wake() const;
    // Any thread: the connection closes at once, whatever is unsent (a client too slow to keep
    // up with what it is sent). Does nothing once closed.
    void abort() const;
    // The stream ended or its connection closed (the client left, a timeout, the drain).
    bool closed() const { return !link_ || link_->closed.load(std::memory_order_acquire); }
    const std::shared_ptr<StreamLink>& link() const { return link_; }

private:
    void resume() const;  // has the session look at the link, on its loop
    std::shared_ptr<StreamLink> link_;
};

// Appends the next piece of a streamed body to `out`. `waker` stays valid for the stream's life
// (the same link on every call).
using StreamProducer = std::function<Produced(std::string& out, const StreamWaker& waker)>;

// The session's side: binds a link to its connection, and closes it.
void open_link(StreamLink& link, IoThread& thread, int fd, uint64_t connection_id);
void close_link(StreamLink& link);

}  // namespace rivet::engine
