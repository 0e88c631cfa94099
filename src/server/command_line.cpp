#include "server/command_line.hpp"

#include <charconv>
#include <functional>
#include <map>

namespace rivet::server {

namespace {

template <typename T>
bool parse_number(const std::string& text, T min, T max, T& out) {
    T v{};
    auto r = std::from_chars(text.data(), text.data() + text.size(), v);
    if (r.ec != std::errc() || r.ptr != text.data() + text.size() || v < min || v > max)
        return false;
    out = v;
    return true;
}

}  // namespace

std::string usage() {
    return R"(Usage: rivet [options]

Serves the demo site and endpoints (/hello, /echo, /fibonacci, /json, /calc, /work, ...).

Options:
  --port N          TCP port to listen on (default 8080; 0 picks a free one)
  --bind ADDR       address to listen on (default 0.0.0.0; numeric IPv4 or IPv6)
  --threads N       I/O loops (default: one per core)
  --workers N       worker threads for CPU-heavy routes (default: one per core)
  --queue N         offloaded requests waiting for a worker before 503 (default 1024)
  --root DIR        document root holding the demo page index.html (default: public)
  --help            show this help
  --version         show the version
)";
}

CommandLine parse_command_line(const std::vector<std::string>& args) {
    CommandLine cl;
    auto fail = [&cl](std::string message) {
        cl.action = CommandLine::Action::Error;
        cl.error = std::move(message);
        return cl;
    };
    using Setter = std::function<bool(const std::string&)>;
    std::map<std::string, Setter> options = {
        {"--port",
         [&](const std::string& v) { return parse_number<uint16_t>(v, 0, 65535, cl.run.port); }},
        {"--bind",
         [&](const std::string& v) {
             cl.run.host = v;
             return !v.empty();
         }},
        {"--threads",
         [&](const std::string& v) { return parse_number<unsigned>(v, 1, 1024, cl.run.threads); }},
        {"--workers",
         [&](const std::string& v) { return parse_number<unsigned>(v, 1, 1024, cl.run.workers); }},
        {"--queue",
         [&](const std::string& v) {
             return parse_number<size_t>(v, 1, 10'000'000, cl.run.queue);
         }},
        {"--root",
         [&](const std::string& v) {
             cl.demo.root = v;
             return !v.empty();
         }},
    };
    for (size_t i = 0; i < args.size(); ++i) {
        std::string arg = args[i];
        if (arg == "--help" || arg == "-h") {
            cl.action = CommandLine::Action::Help;
            return cl;
        }
        if (arg == "--version") {
            cl.action = CommandLine::Action::Version;
            return cl;
        }
        std::string value;
        bool inline_value = false;
        if (auto eq = arg.find('='); eq != std::string::npos && arg.rfind("--", 0) == 0) {
            value = arg.substr(eq + 1);
            arg = arg.substr(0, eq);
            inline_value = true;
        }
        auto it = options.find(arg);
        if (it == options.end()) return fail("unknown option '" + arg + "' (see rivet --help)");
        if (!inline_value) {
            if (i + 1 >= args.size()) return fail("option " + arg + " needs a value");
            value = args[++i];
        }
        if (!it->second(value)) return fail("invalid value '" + value + "' for " + arg);
    }
    return cl;
}

}  // namespace rivet::server
