// StreamWaker and its link (stream.hpp).
#include "engine/stream.hpp"

#include "engine/io_thread.hpp"

namespace rivet::engine {

void open_link(StreamLink& link, IoThread& thread, int fd, uint64_t connection_id) {
    std::lock_guard lock(link.mutex);
    link.thread = &thread;
    link.fd = fd;
    link.connection_id = connection_id;
}

void close_link(StreamLink& link) {
    std::lock_guard lock(link.mutex);
    link.closed.store(true, std::memory_order_release);
    link.thread = nullptr;
}

void StreamWaker::wake() const {
    if (!link_) return;
    // Published before any resume is asked for: a session that finds its producer waiting
    // looks at it, so a wake racing with the producer's "Waiting" is never lost.
    link_->woken.store(true, std::memory_order_release);
    resume();
}

void StreamWaker::abort() const {
    if (!link_) return;
    link_->aborted.store(true, std::memory_order_release);
    resume();
}

void StreamWaker::resume() const {
    StreamLink& link = *link_;
    if (link.resume_posted.exchange(true, std::memory_order_acq_rel)) return;
    IoThread* thread;
    {
        std::lock_guard lock(link.mutex);
        thread = link.thread;
        if (!thread) return;
        // Off the loop the post happens under the lock: the session clears `thread` under it
        // before its loop can go away.
        if (!thread->can_deliver_in_place()) {
            thread->loop().post([link = link_] {
                link->resume_posted.store(false, std::memory_order_release);
                IoThread* t = link->thread;  // read on the loop: only the loop clears it
                if (t) t->resume_stream(link->fd, link->connection_id, link.get());
            });
            return;
        }
    }
    // On the loop, outside any connection's event: resume now. Only this thread clears the
    // link, so it still names a live connection.
    link.resume_posted.store(false, std::memory_order_release);
    thread->resume_stream(link.fd, link.connection_id, &link);
}

}  // namespace rivet::engine
