// The rivet executable's flags. Parsing never exits: it returns what to do, so it can be tested.
// --config FILE is read first and every other flag overrides what the file says.
#pragma once

#include <string>
#include <vector>

#include <rivet/app.hpp>

#include "server/config.hpp"
#include "server/demo_routes.hpp"

namespace rivet::server {

struct CommandLine : Config {
    enum class Action { Serve, Help, Version, CheckConfig, Error } action = Action::Serve;
    std::string error;        // Action::Error: what was wrong, for the user (may be several lines)
    std::string config_path;  // --config, or empty
};

CommandLine parse_command_line(const std::vector<std::string>& args);
std::string usage();
// What --version prints: "rivet MAJOR.MINOR.PATCH\n", from <rivet/version.hpp>.
std::string version_line();

}  // namespace rivet::server
