// The public StreamWaker over the engine's stream link, and the conversion of a Response's
// producer (either form) into the engine's StreamProducer.
#pragma once

#include <memory>

#include <rivet/response.hpp>
#include <rivet/stream.hpp>

#include "engine/stream.hpp"

namespace rivet::detail {

struct WakerAccess {
    static StreamWaker make(std::shared_ptr<engine::StreamLink> link) {
        StreamWaker w;
        w.link_ = std::move(link);
        return w;
    }
    static const std::shared_ptr<engine::StreamLink>& link(const StreamWaker& w) { return w.link_; }
};

}  // namespace rivet::detail

namespace rivet::app {

// Null when the response is not streamed.
std::shared_ptr<engine::StreamProducer> engine_stream(const Response& r);

}  // namespace rivet::app
