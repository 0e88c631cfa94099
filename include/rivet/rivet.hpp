// rivet: a fast HTTP/1.1 server and C++20 framework. One include for the whole API.
#pragma once

#include <rivet/app.hpp>
#include <rivet/async.hpp>
#include <rivet/async_reply.hpp>
#include <rivet/compression.hpp>
#include <rivet/context.hpp>
#include <rivet/coro.hpp>
#include <rivet/cors.hpp>
#include <rivet/event_loop.hpp>
#include <rivet/event_stream.hpp>
#include <rivet/http_client.hpp>
#include <rivet/redis.hpp>
#include <rivet/http_error.hpp>
#include <rivet/middleware.hpp>
#include <rivet/request.hpp>
#include <rivet/request_id.hpp>
#include <rivet/response.hpp>
#include <rivet/shutdown.hpp>
#include <rivet/stream.hpp>
#include <rivet/task.hpp>
#include <rivet/tls.hpp>
#include <rivet/version.hpp>
#include <rivet/websocket.hpp>
