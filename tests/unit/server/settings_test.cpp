// The settings schema: every setting documented in docs/CONFIG.md with its default and flag, in
// --help and --check-config, and the same checks for a flag as for the file's key.
#include "server/settings.hpp"

#include <fstream>
#include <map>
#include <sstream>

#include <gtest/gtest.h>

#include "server/command_line.hpp"

using rivet::server::CommandLine;
using rivet::server::Config;
using rivet::server::default_config;
using rivet::server::parse_command_line;
using rivet::server::settings::json;
using rivet::server::settings::schema;

namespace {

// docs/CONFIG.md's key tables: section -> key -> cells after the key's ("`8080`", "`--port`").
using DocRows = std::map<std::string, std::map<std::string, std::vector<std::string>>>;

DocRows documented_keys() {
    std::ifstream in(std::string(RIVET_FIXTURES_DIR) + "/../../docs/CONFIG.md");
    DocRows rows;
    std::string line, section;
    while (std::getline(in, line)) {
        if (line.rfind("### ", 0) == 0) section = line.substr(4);
        if (line.rfind("## ", 0) == 0) section.clear();
        if (section.empty() || line.rfind("| `", 0) != 0) continue;
        std::vector<std::string> cells;
        std::stringstream s(line.substr(2));
        for (std::string cell; std::getline(s, cell, '|');) {
            while (!cell.empty() && cell.back() == ' ') cell.pop_back();
            while (!cell.empty() && cell.front() == ' ') cell.erase(0, 1);
            cells.push_back(cell);
        }
        std::string key = cells[0].substr(1, cells[0].size() - 2);  // `key`
        cells.erase(cells.begin());
        rows[section][key] = cells;
    }
    return rows;
}

// A default as the docs write it: `8080`, `"public"`, `[]`, `true`; "—" for none.
std::string documented_default(const json& v) {
    if (v.is_null()) return "—";
    std::string cell = "`";
    cell += v.is_string() ? v.dump() : rivet::server::settings::shown_plainly(v);
    return cell += "`";
}

std::string refusal(const std::vector<std::string>& args) {
    auto cl = parse_command_line(args);
    return cl.action == CommandLine::Action::Error ? cl.error : "(accepted)";
}

}  // namespace

TEST(Settings, EveryKeyIsDocumentedWithItsDefaultAndFlag) {
    auto docs = documented_keys();
    ASSERT_FALSE(docs.empty()) << "docs/CONFIG.md not found or without key tables";
    const Config defaults = default_config();
    size_t count = 0;
    for (const auto& section : schema()) {
        auto& table = docs[section.name];
        for (const auto& s : section.settings) {
            ++count;
            std::string key = section.name + "." + s.name;
            auto row = table.find(s.name);
            ASSERT_NE(row, table.end()) << key << " is not in docs/CONFIG.md";
            const auto& cells = row->second;
            json value = s.value.get ? s.value.get(defaults) : json();
            // tls.certificates has no default: the section needs them.
            std::string want = value.is_array() && value.empty() && section.name == "tls"
                                   ? "—"
                                   : documented_default(value);
            EXPECT_EQ(cells.at(0), want) << key;
            for (const auto& f : s.flags) {
                ASSERT_GE(cells.size(), 3u) << key << " has a flag; its table needs a flag column";
                EXPECT_NE(cells.at(1).find("`" + f.name), std::string::npos)
                    << key << ": its row does not name " << f.name;
            }
            table.erase(row);
        }
        for (const auto& [key, cells] : table)
            ADD_FAILURE() << "docs/CONFIG.md documents " << section.name << "." << key
                          << ", which no setting has";
    }
    EXPECT_GT(count, 50u);
}

TEST(Settings, HelpListsEveryFlagAndAlias) {
    auto help = rivet::server::usage();
    for (const auto& section : schema())
        for (const auto& s : section.settings)
            for (const auto& f : s.flags) {
                EXPECT_NE(help.find("  " + f.name + (f.metavar.empty() ? "" : " " + f.metavar)),
                          std::string::npos)
                    << f.name;
                for (const auto& alias : f.aliases)
                    EXPECT_NE(help.find("also " + alias), std::string::npos) << alias;
            }
    std::stringstream lines(help);
    for (std::string line; std::getline(lines, line);)
        EXPECT_LE(line.size(), 100u) << "a --help line too long for a terminal: " << line;
    EXPECT_NE(help.find("--keepalive-timeout S"), std::string::npos);
    EXPECT_NE(help.find("(60)"), std::string::npos) << "defaults come from the schema";
}

TEST(Settings, CheckConfigShowsEverySettingThatHasAValue) {
    Config c = default_config();
    c.run.tls.certificates = {{"c.pem", "k.pem"}};
    auto shown = rivet::server::effective_config(c);
    for (const auto& section : schema())
        for (const auto& s : section.settings) {
            if (!s.value.get) continue;
            EXPECT_TRUE(shown[section.name].contains(s.name)) << section.name << "." << s.name;
        }
    EXPECT_FALSE(shown["server"].contains("socket_timeout"));  // it only sets the three others
}

TEST(Settings, OneNameWithTheOldOnesAsAliases) {
    for (auto [name, alias] :
         {std::pair{"--io-threads", "--threads"}, std::pair{"--thread-pool-size", "--workers"}}) {
        auto a = parse_command_line({name, "3"});
        auto b = parse_command_line({std::string(alias) + "=3"});
        ASSERT_EQ(a.action, CommandLine::Action::Serve) << a.error;
        ASSERT_EQ(b.action, CommandLine::Action::Serve) << b.error;
        EXPECT_EQ(rivet::server::effective_config(a).dump(),
                  rivet::server::effective_config(b).dump());
        EXPECT_EQ(refusal({alias, "0"}), "invalid value '0' for " + std::string(alias) +
                                             ": expected an integer from 1 to 1024");
    }
    EXPECT_EQ(parse_command_line({"--io-threads", "3"}).run.threads, 3u);
    EXPECT_EQ(parse_command_line({"--thread-pool-size", "4"}).run.workers, 4u);
}

TEST(Settings, AFlagIsCheckedAsItsKeyIs) {
    // Every flag taking the setting's own numbers says the range the file's key has.
    size_t checked = 0;
    for (const auto& section : schema())
        for (const auto& s : section.settings)
            for (const auto& f : s.flags) {
                if (f.metavar.empty() || f.value || s.value.expected.empty()) continue;
                std::string expected = f.expected.empty() ? s.value.expected : f.expected;
                EXPECT_EQ(refusal({f.name, "x1"}),
                          "invalid value 'x1' for " + f.name + ": expected " + expected);
                Config c = default_config();
                auto problems = rivet::server::apply_config_text(
                    "{\"" + section.name + "\": {\"" + s.name + "\": \"x1\"}}", "f", c);
                ASSERT_EQ(problems.size(), 1u) << f.name;
                EXPECT_NE(problems[0].find(s.value.expected), std::string::npos) << problems[0];
                ++checked;
            }
    EXPECT_GT(checked, 15u);
    // Numbers must be finite: "nan" passed the range check of the flags before the schema.
    EXPECT_EQ(refusal({"--rate-limit", "nan"}),
              "invalid value 'nan' for --rate-limit: expected a number from 0 to 1e+09");
    EXPECT_NE(refusal({"--header-timeout", "inf"}).find("invalid value 'inf'"), std::string::npos);
    // An address is checked on the command line too, not first at bind time.
    EXPECT_EQ(refusal({"--bind", "localhost"}),
              "invalid value 'localhost' for --bind: expected a numeric IPv4 or IPv6 address");
}
