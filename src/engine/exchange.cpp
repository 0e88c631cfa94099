#include "engine/exchange.hpp"

#include "engine/connection.hpp"
#include "engine/io_thread.hpp"

namespace rivet::engine {

std::string Exchange::peer_address() const {
    return connection_.peer_address();
}
PeerIp Exchange::peer_ip() const {
    return connection_.peer_ip();
}
unsigned Exchange::loop_index() const {
    return connection_.loop_index();
}

void Exchange::respond(const Response& response) {
    if (answered_) return;
    answered_ = true;
    status_ = response.status();
    const FileRange* file = response.file_range();
    body_bytes_ = file ? file->length : response.body().size();
    connection_.respond(head_, response);
}

void Exchange::respond_simple(int status, std::string_view body, std::string_view extra_fields) {
    if (answered_) return;
    answered_ = true;
    status_ = status;
    body_bytes_ = body.size();
    connection_.respond_simple(head_, status, body, extra_fields);
}

Deferred Exchange::defer() {
    if (answered_) return {};  // one answer per request; an empty Deferred completes nothing
    answered_ = true;
    return connection_.defer(head_);
}

Deferred& Deferred::operator=(Deferred&& other) noexcept {
    if (this != &other) {
        if (valid()) {
            complete(std::move(Response(500).text("Internal Server Error\n")));
        }
        thread_ = other.thread_;
        fd_ = other.fd_;
        connection_id_ = other.connection_id_;
        sequence_ = other.sequence_;
        other.thread_ = nullptr;
    }
    return *this;
}

Deferred::~Deferred() {
    if (valid()) {
        complete(std::move(Response(500).text("Internal Server Error\n")));
    }
}

void Deferred::complete(Response&& response) {
    if (!thread_) return;
    IoThread* thread = thread_;
    thread_ = nullptr;
    thread->loop().post(
        [thread, fd = fd_, id = connection_id_, seq = sequence_,
         r = std::move(response)]() mutable { thread->deliver(fd, id, seq, std::move(r)); });
}

}  // namespace rivet::engine
