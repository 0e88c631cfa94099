// BodySource: a streamed request body, pulled piece by piece on the connection's loop thread.
//
// When Application::plan_body chooses BodyPlan::Mode::Streamed, serve() runs right after the
// head and the body stays in the socket: the engine reads it only while the handler asks for a
// piece (plus what one read already brought), so a handler that stops asking stalls the client
// through TCP flow control. The handler asks with next(callback): the callback runs later, never
// inside next(), with the next de-chunked piece, then the end, or an error. try_next() hands
// over a piece that is ready now without waiting (what a coroutine's await_ready wants):
//
//     bool await_ready() { return source.try_next(piece); }
//     void await_suspend(std::coroutine_handle<> h) {
//         source.next([this, h](const BodyPiece& p) { piece = p; h.resume(); });
//     }
//
// The handle shares the stream's state with the connection: it stays safe after serve()
// returns, after the answer, and after the connection closes (then it reports an error). Loop
// thread only. A piece's bytes are owned by the state, valid until the next next()/try_next().
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "http/body_decoder.hpp"
#include "http/request_parser.hpp"

namespace rivet::engine {

class BodyStream;
class IoThread;

// Who feeds a streamed body: its HTTP/1.1 connection's session, or its HTTP/2 stream.
class BodyOwner {
public:
    // The handler asks for the next piece (BodySource::next): deliver it later, when it comes.
    virtual void upload_asked() = 0;
    // A piece ready now (BodySource::try_next): true when one (or the end, or an error) is in `s`.
    virtual bool upload_take(BodyStream& s) = 0;

protected:
    ~BodyOwner() = default;
};

struct BodyPiece {
    enum class Kind : uint8_t {
        Data,   // `bytes` is the next piece (never empty)
        End,    // the body is complete; the same is reported to any later call
        Error,  // no more: `status` 400/413 (the engine answered it) or 0 (the connection is
                // gone, or the request was answered before its body ended)
    };
    Kind kind = Kind::End;
    std::string_view bytes;
    int status = 0;
    const char* reason = "";
};

// The state a streamed body's connection and handles share. Engine-internal: use BodySource.
class BodyStream : public std::enable_shared_from_this<BodyStream> {
public:
    enum class State : uint8_t { Open, Ended, Failed };

    // `head` lies at `head_bytes` in the input: its bytes are copied, so that the head outlives
    // the connection's buffer (and the request after it).
    BodyStream(IoThread& thread, BodyOwner& connection, const http::RequestHead& head,
               std::string_view head_bytes, uint64_t limit);

    // HTTP/1.1: decodes the next piece out of `in` into piece_. Returns the bytes of `in` used;
    // `made` is set when a piece (or the end, or an error) is ready to deliver.
    size_t decode(std::string_view in, bool& made);
    // HTTP/2: DATA frames' payload, framed already (the stream checks the limit).
    void append(std::string_view bytes) {
        piece.append(bytes);
        received += bytes.size();
    }
    BodyPiece current() const;  // the piece to deliver now
    void fail(int status, const char* reason);
    void deliver();        // hands current() to the waiting callback, if any
    void deliver_later();  // the same, from a task posted to the loop

    IoThread& thread;
    BodyOwner* connection;  // null once the connection is done with the body (or gone)
    http::RequestHead head;
    State state = State::Open;
    bool continue_owed = false;  // Expect: 100-continue not answered yet
    uint64_t answer_slot = 0;    // the handler's deferred answer (0: none yet)
    uint64_t received = 0;       // payload bytes decoded so far
    std::function<void(const BodyPiece&)> waiting;
    std::string piece;

private:
    std::string head_copy_;
    std::vector<http::Header> fields_;
    http::BodyDecoder decoder_;  // the pieces are its sink
    int error_status_ = 0;
    const char* error_reason_ = "";
};

class BodySource {
public:
    using Callback = std::function<void(const BodyPiece&)>;

    BodySource() = default;
    explicit BodySource(BodyStream* stream)
        : stream_(stream ? stream->shared_from_this() : nullptr) {}

    bool valid() const { return stream_ != nullptr; }
    // Asks for the next piece: `callback` runs exactly once, later, on the loop's thread.
    // False (and no callback) when a request is already outstanding or the source is empty.
    bool next(Callback callback);
    // The next piece if one is ready now (buffered bytes, the end, an error): true and `out`.
    // False while a next() is outstanding or the piece must wait for the socket.
    bool try_next(BodyPiece& out);
    uint64_t received() const { return stream_ ? stream_->received : 0; }
    // The request's head, owned by the stream: valid as long as this handle.
    const http::RequestHead* head() const { return stream_ ? &stream_->head : nullptr; }

private:
    std::shared_ptr<BodyStream> stream_;
};

// Moves a head's views (and its fields') that point into [from, from + len) to `to`.
void rebase_head(http::RequestHead& head, std::vector<http::Header>& fields, const char* from,
                 size_t len, const char* to);

}  // namespace rivet::engine
