#include "server/command_line.hpp"

#include <map>
#include <set>

#include <rivet/version.hpp>

#include "server/settings.hpp"
#include "server/tls_config.hpp"

namespace rivet::server {

namespace {

using settings::json;

// A flag of the schema with its setting, whichever spelling named it.
struct FlagOf {
    const settings::Setting* setting;
    const settings::Flag* flag;
};

const std::map<std::string, FlagOf>& flags_by_name() {
    static const auto index = [] {
        std::map<std::string, FlagOf> m;
        for (const auto& section : settings::schema())
            for (const auto& s : section.settings)
                for (const auto& f : s.flags) {
                    m[f.name] = {&s, &f};
                    for (const auto& alias : f.aliases) m[alias] = {&s, &f};
                }
        return m;
    }();
    return index;
}

// Flags that are no setting of the file (--config, --check-config, --inline-heavy).
struct OwnFlags {
    std::string& config_path;
    bool& check_config;
};

enum class Outcome { Done, Help, Version, Error };

// Gives one flag's text to its setting: empty, or what was wrong, naming the flag as spelled.
std::string apply_flag(const std::string& spelled, const FlagOf& f, const std::string& text,
                       Config& c) {
    const settings::Value& value = f.flag->value ? *f.flag->value : f.setting->value;
    auto parsed = value.from_text(text);
    std::string problem = parsed ? value.set(*parsed, c) : "not a value";
    if (problem.empty()) return {};
    if (parsed && value.names_its_entries) return spelled + ": " + problem;
    std::string error = "invalid value '" + text + "' for " + spelled;
    const std::string& expected = f.flag->expected.empty() ? value.expected : f.flag->expected;
    if (!expected.empty()) error += ": expected " + expected;
    return error;
}

// Applies every flag but --config's file to `c`. Stops at the first problem, --help or
// --version.
Outcome apply_flags(const std::vector<std::string>& args, Config& c, std::string& error,
                    OwnFlags own) {
    std::set<std::string> given;  // canonical names, for the flags that go in pairs
    for (size_t i = 0; i < args.size(); ++i) {
        std::string arg = args[i];
        if (arg == "--help" || arg == "-h") return Outcome::Help;
        if (arg == "--version") return Outcome::Version;
        if (arg == "--check-config") {
            own.check_config = true;
            continue;
        }
        if (arg == "--inline-heavy") {
            c.demo.inline_heavy = true;
            continue;
        }
        std::string value;
        bool inline_value = false;
        if (auto eq = arg.find('='); eq != std::string::npos && arg.rfind("--", 0) == 0) {
            value = arg.substr(eq + 1);
            arg = arg.substr(0, eq);
            inline_value = true;
        }
        if (arg == "--config") {
            if (!inline_value) {
                if (i + 1 >= args.size()) {
                    error = "option --config needs a value";
                    return Outcome::Error;
                }
                value = args[++i];
            }
            if (value.empty()) {
                error = "invalid value '' for --config: expected a configuration file";
                return Outcome::Error;
            }
            own.config_path = value;
            continue;
        }
        const auto& index = flags_by_name();
        auto it = index.find(arg);
        // A switch takes no value: "--redirect-https=1" is no flag rivet knows.
        if (it == index.end() || (inline_value && it->second.flag->metavar.empty())) {
            error = "unknown option '" + arg + "' (see rivet --help)";
            return Outcome::Error;
        }
        const FlagOf& f = it->second;
        given.insert(f.flag->name);
        if (f.flag->metavar.empty()) {  // a switch
            const auto& v = f.flag->value ? *f.flag->value : f.setting->value;
            v.set(f.flag->switch_value, c);
            continue;
        }
        if (!inline_value) {
            if (i + 1 >= args.size()) {
                error = "option " + arg + " needs a value";
                return Outcome::Error;
            }
            value = args[++i];
        }
        if (error = apply_flag(arg, f, value, c); !error.empty()) return Outcome::Error;
    }
    // One certificate and its key on the command line, in place of the file's certificates.
    if (given.count("--tls-cert") != given.count("--tls-key")) {
        error = given.count("--tls-key")
                    ? "--tls-key needs --tls-cert (the certificate it belongs to)"
                    : "--tls-cert needs --tls-key (its private key)";
        return Outcome::Error;
    }
    return Outcome::Done;
}

// "  --flag META" padded to the help's column, then its line.
void help_line(std::string& out, const std::string& left, const std::string& right) {
    constexpr size_t kColumn = 34;
    std::string line = "  " + left;
    line += line.size() < kColumn ? std::string(kColumn - line.size(), ' ') : "  ";
    out += line + right + "\n";
}

}  // namespace

std::string usage() {
    std::string out = R"(Usage: rivet [options]

Serves the demo site and endpoints (/hello, /echo, /fibonacci, /json, /calc, /work, ...).
Every option but --config and --check-config overrides the configuration file (docs/CONFIG.md);
each section below is the file's section of that name, with the defaults in parentheses.

Options:
)";
    help_line(out, "--config FILE", "read the JSON configuration FILE first (SIGHUP re-reads it)");
    help_line(out, "--check-config", "validate the configuration, print the effective one, exit");
    help_line(out, "--inline-heavy", "run /calc, /work, large /fibonacci and /json on the I/O");
    help_line(out, "", "loops, to compare concurrency models (it stalls the others)");
    const Config defaults = default_config();
    for (const auto& section : settings::schema()) {
        std::string lines;
        for (const auto& s : section.settings)
            for (const auto& f : s.flags) {
                std::string left = f.name + (f.metavar.empty() ? "" : " " + f.metavar);
                std::string right = f.help.empty() ? s.help : f.help;
                json value = s.value.get && f.help.empty() ? s.value.get(defaults) : json();
                bool empty = value.is_null() ||
                             (value.is_string() && value.get<std::string>().empty()) ||
                             (value.is_array() && value.empty());
                if (!f.metavar.empty() && !empty)
                    right += " (" + settings::shown_plainly(value) + ")";
                for (const auto& alias : f.aliases) right += "; also " + alias;
                help_line(lines, left, right);
            }
        if (!lines.empty())
            out += "\n" + section.title + " (file section \"" + section.name + "\"):\n" + lines;
    }
    out += R"(
In-place upgrade (docs/OPERATIONS.md): SIGUSR2 starts the binary again on the same sockets
  rivet --upgrade --pid-file PATH | --config FILE [--timeout-ms N]
                         signal the rivet named there and wait for the new process (30000 ms)

Container health check (exits 0 on a 2xx answer, 1 otherwise, 2 on a bad URL):
  rivet --healthcheck http://HOST:PORT/PATH [--timeout-ms N]   (default 2000 ms)

  --help            show this help
  --version         show the version
)";
    return out;
}

std::string version_line() {
    return "rivet " RIVET_VERSION_STRING "\n";
}

CommandLine parse_command_line(const std::vector<std::string>& args) {
    CommandLine cl;
    static_cast<Config&>(cl) = default_config();
    // First pass on a scratch copy: the flags' own errors, --help, --version and --config.
    Config scratch = cl;
    bool check = false;
    switch (apply_flags(args, scratch, cl.error, {cl.config_path, check})) {
        case Outcome::Help:
            cl.action = CommandLine::Action::Help;
            return cl;
        case Outcome::Version:
            cl.action = CommandLine::Action::Version;
            return cl;
        case Outcome::Error:
            cl.action = CommandLine::Action::Error;
            return cl;
        case Outcome::Done:
            break;
    }
    if (!cl.config_path.empty()) {
        auto problems = apply_config_file(cl.config_path, cl);
        if (!problems.empty()) {
            cl.action = CommandLine::Action::Error;
            for (size_t i = 0; i < problems.size(); ++i)
                cl.error += (i ? "\nrivet: " : "") + problems[i];
            return cl;
        }
    }
    // Second pass: the flags win over the file.
    std::string ignored;
    apply_flags(args, cl, cl.error, {ignored, check});
    if (auto problem = check_tls_settings(cl); !problem.empty()) {
        cl.action = CommandLine::Action::Error;
        cl.error = problem;
        return cl;
    }
    if (check) cl.action = CommandLine::Action::CheckConfig;
    return cl;
}

}  // namespace rivet::server
