// The framework's public options and responses in the engine's terms: the one place where
// rivet::Limits/Timeouts become engine::Limits/Timeouts and a rivet::Response becomes what the
// engine sends (engine/ knows nothing of the public API).
#pragma once

#include <rivet/app.hpp>
#include <rivet/response.hpp>

#include "engine/reply.hpp"
#include "engine/server_config.hpp"

namespace rivet::app {

// Throws std::invalid_argument for a proxy_trusted entry that is not an address or network.
engine::ServerConfig server_config(const RunOptions& options);

// Field by field, by name; a field on one side only does not compile (server_options.cpp).
engine::Limits engine_limits(const rivet::Limits& limits);
engine::Timeouts engine_timeouts(const rivet::Timeouts& timeouts);

// For an answer written at once: views into `r`, nothing copied.
engine::ReplyView view_of(const Response& r);
// For an answer handed over (a worker's): the body is moved, the fields copied.
engine::Reply reply_of(Response&& r);

}  // namespace rivet::app
