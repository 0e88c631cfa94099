// client::resolve: a host name to addresses without blocking the loop. IP literals are converted
// at once; names go to c-ares, whose sockets are watched by the loop and whose timeouts are the
// loop's timers (one c-ares channel per loop thread, made on first use).
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "net/loop.hpp"

namespace rivet::client {

struct Address {
    sockaddr_storage addr{};
    socklen_t len = 0;
};

// `done(addresses, error)`: addresses in the resolver's order (empty with an error message when
// the name does not resolve). Runs on the loop, never inside resolve() itself.
using Resolved = std::function<void(std::vector<Address>, std::string error)>;

// Returns an id for cancel_resolve (after which `done` is not called).
uint64_t resolve(net::Loop& loop, const std::string& host, uint16_t port, Resolved done);
void cancel_resolve(uint64_t id);

}  // namespace rivet::client
