// The Redis connections of the calling loop's thread, one per server (host and port), shared by
// the handlers' rivet::Redis and the server's shared rate limit: Redis pipelines, so one
// connection carries a loop's whole load and costs nothing while idle.
#pragma once

#include <cstdint>
#include <string>

#include "net/loop.hpp"
#include "redis/connection.hpp"

namespace rivet::app {

// The calling thread's connection to `endpoint` (made on first use) on `loop`; loop thread only.
// The connection's timeouts are those of the endpoint that opened it; its credentials follow
// the latest endpoint that has some (a reload's new password), for its next connect.
redis::Connection& redis_connection(net::Loop& loop, const redis::Endpoint& endpoint);

}  // namespace rivet::app
