// The coroutine side of a streamed request body (rivet/body_stream.hpp) over the engine's
// BodySource: pieces are pulled one at a time, so the engine reads the socket only while the
// handler waits for one.
#include <rivet/body_stream.hpp>
#include <rivet/http_error.hpp>
#include <rivet/request.hpp>

#include <stdexcept>

#include "app/request/body_stream.hpp"

namespace rivet {

namespace detail {

namespace {

void take(PieceSlot& slot, const engine::BodyPiece& piece) {
    using Kind = engine::BodyPiece::Kind;
    slot.bytes = piece.bytes;  // owned by the stream until the next next()
    slot.status = piece.status;
    slot.reason = piece.reason ? piece.reason : "";
    slot.kind = piece.kind == Kind::Data  ? PieceSlot::Kind::Data
                : piece.kind == Kind::End ? PieceSlot::Kind::End
                                          : PieceSlot::Kind::Error;
}

}  // namespace

bool body_try_next(BodyStreamState& state, PieceSlot& slot) {
    if (state.buffered) {  // all there already: one piece, then the end
        std::string_view body = state.buffered_given ? "" : state.buffered->body();
        state.buffered_given = true;
        slot.bytes = body;
        slot.kind = body.empty() ? PieceSlot::Kind::End : PieceSlot::Kind::Data;
        return true;
    }
    engine::BodyPiece piece;
    if (!state.source.try_next(piece)) return false;
    take(slot, piece);
    return true;
}

bool body_next(BodyStreamState& state, const std::shared_ptr<PieceSlot>& slot) {
    slot->kind = PieceSlot::Kind::Pending;
    bool asked = state.source.next([slot](const engine::BodyPiece& piece) {
        take(*slot, piece);
        // The engine calls back from its reading, never from inside next(): the handler may ask
        // again at once. A frame destroyed meanwhile (cancelled) cleared the waiter.
        if (auto waiter = std::exchange(slot->waiter, {})) waiter.resume();
    });
    if (!asked) {  // two next() at once: say so rather than wait forever
        slot->kind = PieceSlot::Kind::Error;
        slot->status = 0;
        slot->reason = "the request body is already being read";
        slot->waiter = {};
    }
    return asked;
}

std::optional<std::string_view> body_result(const PieceSlot& slot) {
    switch (slot.kind) {
        case PieceSlot::Kind::Data:
            return slot.bytes;
        case PieceSlot::Kind::End:
            return std::nullopt;
        default:
            break;
    }
    // 400/413: the engine answered already; this ends the handler the same way.
    if (slot.status >= 400) throw HttpError(slot.status, slot.reason);
    throw std::runtime_error(
        "the request body cannot be read: " +
        (slot.reason.empty() ? std::string("the client went away") : slot.reason));
}

uint64_t body_received(const BodyStreamState& state) {
    if (state.buffered) return state.buffered_given ? state.buffered->body().size() : 0;
    return state.source.received();
}

void attach_body_stream(Request& req, std::shared_ptr<BodyStreamState> stream) {
    req.stream_ = std::move(stream);
}

}  // namespace detail

BodyStream Request::body_stream() const {
    if (stream_) return BodyStream(stream_);
    auto buffered = std::make_shared<detail::BodyStreamState>();
    buffered->buffered = this;
    return BodyStream(std::move(buffered));
}

}  // namespace rivet
