// The rivet executable: flags -> App with the demo routes -> serve until SIGINT/SIGTERM.
#include <cstdio>
#include <exception>

#include "server/command_line.hpp"
#include "server/demo_routes.hpp"

int main(int argc, char** argv) {
    using rivet::server::CommandLine;
    auto cl = rivet::server::parse_command_line(std::vector<std::string>(argv + 1, argv + argc));
    switch (cl.action) {
        case CommandLine::Action::Help:
            std::fputs(rivet::server::usage().c_str(), stdout);
            return 0;
        case CommandLine::Action::Version:
            std::printf("rivet %s\n", RIVET_VERSION);
            return 0;
        case CommandLine::Action::Error:
            std::fprintf(stderr, "rivet: %s\n", cl.error.c_str());
            return 2;
        case CommandLine::Action::Serve:
            break;
    }
    try {
        rivet::App app;
        rivet::server::add_demo_routes(app, cl.demo);
        app.run(cl.run);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "rivet: %s\n", e.what());
        return 1;
    }
    return 0;
}
