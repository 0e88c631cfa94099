// What --check-config finds that would make rivet fail at its start although each setting is
// good alone: two listeners on one port, a log or pid file in a directory that does not exist.
#pragma once

#include <string>
#include <vector>

#include "server/config.hpp"

namespace rivet::server {

// One line per problem, each naming the setting and its flag; empty when there is none.
// Inherited listeners (socket activation, an upgrade) make the ports unused, so serving does not
// run this: --check-config does.
std::vector<std::string> check_startup(const Config& config);

}  // namespace rivet::server
