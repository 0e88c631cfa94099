// The public Trailers over the engine's: the handle's fields are the engine::Trailers the answer
// carries (ReplyView::trailers), so what a producer adds at the end is what the session sends.
#pragma once

#include <memory>

#include <rivet/response.hpp>

#include "engine/reply.hpp"

namespace rivet::detail {

struct TrailerFields : engine::Trailers {};

struct TrailerAccess {
    // Null when the response has no trailers.
    static std::shared_ptr<engine::Trailers> of(const Response& r) { return r.trailers_.fields_; }
};

}  // namespace rivet::detail
