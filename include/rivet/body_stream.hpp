// rivet::BodyStream: a request body taken piece by piece, with backpressure, by a coroutine
// handler on a route marked `.stream_body()`. The server reads from the socket only while the
// handler asks for a piece, so an upload larger than memory goes to a file or a hash in bounded
// memory, and a slow consumer slows the client down instead of filling the server:
//
//   app.post("/upload", [](rivet::Request& req, rivet::Response& res) -> rivet::Task<> {
//       rivet::BodyStream body = req.body_stream();
//       while (auto piece = co_await body.next()) write(fd, piece->data(), piece->size());
//       res.json({{"bytes", body.received()}});
//   }).stream_body().max_body(uint64_t(10) << 30);
//
// A piece is a view valid until the next call to next(). next() yields std::nullopt at the end
// of the body; it throws HttpError(400) for malformed chunked coding and HttpError(413) for a body
// over the route's limit (the server has then answered and closes the connection). When the
// client goes away the handler is cancelled at its suspension, as for every awaitable.
#pragma once

#include <coroutine>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <rivet/task.hpp>

namespace rivet {

namespace detail {

struct BodyStreamState;  // the engine's stream of this request (src/app/request/body_stream.cpp)

// One next() in flight: what arrived, and the coroutine to resume with it.
struct PieceSlot {
    enum class Kind : uint8_t { Pending, Data, End, Error } kind = Kind::Pending;
    std::string_view bytes;
    int status = 0;
    std::string reason;
    std::coroutine_handle<> waiter;  // cleared when the awaiting frame is destroyed
};

bool body_try_next(BodyStreamState& state, PieceSlot& slot);  // a piece ready now
// False (the slot then holds an error) when the piece cannot be asked for.
bool body_next(BodyStreamState& state, const std::shared_ptr<PieceSlot>& slot);
std::optional<std::string_view> body_result(const PieceSlot& slot);  // throws on Error
uint64_t body_received(const BodyStreamState& state);

class BodyPieceAwaiter {
public:
    static constexpr bool rivet_cancel_safe = true;
    explicit BodyPieceAwaiter(std::shared_ptr<BodyStreamState> state)
        : state_(std::move(state)), slot_(std::make_shared<PieceSlot>()) {}
    BodyPieceAwaiter(BodyPieceAwaiter&&) = default;
    ~BodyPieceAwaiter() {
        if (slot_) slot_->waiter = {};  // a cancelled handler's frame is never resumed
    }
    bool await_ready() { return body_try_next(*state_, *slot_); }
    template <class P>
    bool await_suspend(std::coroutine_handle<P> h) {
        if (RootState* root = root_of(h)) root->on_suspend();
        slot_->waiter = h;
        return body_next(*state_, slot_);  // false: resumes at once, await_resume throws
    }
    std::optional<std::string_view> await_resume() { return body_result(*slot_); }

private:
    std::shared_ptr<BodyStreamState> state_;
    std::shared_ptr<PieceSlot> slot_;
};

}  // namespace detail

class BodyStream {
public:
    // Awaitable: the next piece of the body, or std::nullopt once it has all arrived.
    detail::BodyPieceAwaiter next() { return detail::BodyPieceAwaiter(state_); }
    uint64_t received() const { return detail::body_received(*state_); }  // bytes so far

private:
    friend class Request;
    explicit BodyStream(std::shared_ptr<detail::BodyStreamState> state)
        : state_(std::move(state)) {}
    std::shared_ptr<detail::BodyStreamState> state_;
};

}  // namespace rivet
