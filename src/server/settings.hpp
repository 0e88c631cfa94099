// The rivet executable's settings schema: every setting defined once, with its key in the
// configuration file, its flag, its kind (type, range, unit), its one-line help and where it
// lives in the Config. The file reader (config.cpp), the flags and --help (command_line.cpp) and
// the effective configuration that --check-config prints (effective_config.cpp) are all made
// from it, and a unit test checks docs/CONFIG.md against it.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/config.hpp"

namespace rivet::server::settings {

using json = nlohmann::json;

// How one setting's values are read, checked, stored and shown; the kinds in
// server/setting_kinds.hpp make them.
struct Value {
    // A good value, for a flag's refusal ("an integer from 0 to 65535"); empty: none is said.
    std::string expected;
    // Checks a value as the file writes it and stores it; else returns what is wrong with it
    // ("expected an integer from 0 to 65535, got -1").
    std::function<std::string(const json& value, Config& config)> set;
    // The value as the file writes it: the effective configuration and --help's defaults.
    // Null (or returning null): not shown, as for a key that only sets others.
    std::function<json(const Config& config)> get;
    // A flag's text as the file would write the value; nullopt when it cannot be one.
    std::function<std::optional<json>(const std::string& text)> from_text;
    // A flag's refusal is the setter's own problem, which names the bad entry of a list
    // ("--proxy-trusted: \"x\" is not an address or CIDR network"), not "invalid value".
    bool names_its_entries = false;
};

// A command-line flag of a setting. By default it gives the setting the value it is given,
// checked as the file's value is.
struct Flag {
    std::string name;     // "--io-threads"
    std::string metavar;  // "N" in --help; empty: a switch, which takes no value
    // Older spellings, still accepted; --help names them.
    std::vector<std::string> aliases = {};
    // A switch: the value it gives the setting.
    json switch_value = nullptr;
    // When the flag does not take the setting's own values (a narrower range than the file's,
    // or several settings at once): its own, used in place of the setting's.
    std::optional<Value> value = std::nullopt;
    // The refusal's "expected ..." when not the value's own.
    std::string expected = {};
    // --help's line when not the setting's help.
    std::string help = {};
};

struct Setting {
    std::string name;  // its key in its section of the file: "keepalive_timeout"
    Value value;
    std::string help;  // one line: --help, and a row of docs/CONFIG.md
    std::vector<Flag> flags = {};
};

struct Section {
    std::string name;   // "limits": the file's key
    std::string title;  // --help's heading for its flags
    std::vector<Setting> settings;
    // When the section is in the file and every key of it was good: what is wrong with its keys
    // together; empty when nothing is.
    std::function<std::string(const Config& config)> check = nullptr;
    // Whether --check-config prints the section (tls: only with HTTPS on); null: always.
    std::function<bool(const Config& config)> shown = nullptr;
};

// Every section, in the order the file's keys are applied: a broad key (server.socket_timeout)
// comes before the narrow ones that refine it (limits.*), whatever the file's order.
const std::vector<Section>& schema();

// The sections defined beside what they configure.
Section tls_section();     // server/tls_config.cpp
Section limits_section();  // server/limits_settings.cpp

// A value shown to a person: strings bare, whole numbers without ".0", "" for an empty string.
std::string shown_plainly(const json& value);

}  // namespace rivet::server::settings
