#include "app/redis/redis_connections.hpp"

#include <map>
#include <memory>
#include <utility>

namespace rivet::app {

namespace {

// Per thread, as the HTTP client's pool and resolver are: a loop is one thread, so no lock.
// Kept until the thread ends (its loop object still exists then: the thread is joined first).
thread_local std::map<std::pair<std::string, uint16_t>, std::unique_ptr<redis::Connection>>
    t_connections;

}  // namespace

redis::Connection& redis_connection(net::Loop& loop, const redis::Endpoint& endpoint) {
    auto& slot = t_connections[{endpoint.host, endpoint.port}];
    if (!slot || &slot->loop() != &loop) slot = std::make_unique<redis::Connection>(loop, endpoint);
    // Credentials changed by a reload (a rotated password) serve from the next connect on; a
    // user without any (a handler's Redis naming the rate limit's) takes the connection's.
    if (!endpoint.password.empty()) slot->use_credentials(endpoint.username, endpoint.password);
    return *slot;
}

}  // namespace rivet::app
