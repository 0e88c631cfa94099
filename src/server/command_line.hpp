// The rivet executable's flags. Parsing never exits: it returns what to do, so it can be tested.
#pragma once

#include <string>
#include <vector>

#include <rivet/app.hpp>

#include "server/demo_routes.hpp"

namespace rivet::server {

struct CommandLine {
    enum class Action { Serve, Help, Version, Error } action = Action::Serve;
    std::string error;  // Action::Error: what was wrong, for the user
    RunOptions run;
    DemoOptions demo;
};

CommandLine parse_command_line(const std::vector<std::string>& args);
std::string usage();

}  // namespace rivet::server
