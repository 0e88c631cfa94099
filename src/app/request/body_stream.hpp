// What a Request's BodyStream holds: the engine's handle on the streamed body.
#pragma once

#include <rivet/body_stream.hpp>

#include "engine/body_source.hpp"

namespace rivet::detail {

struct BodyStreamState {
    engine::BodySource source;  // a stream_body() route's
    // Otherwise the buffered body, read through the request (whose bytes move when it is
    // detached) as one piece.
    const Request* buffered = nullptr;
    bool buffered_given = false;
};

}  // namespace rivet::detail
