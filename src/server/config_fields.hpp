// The configuration file's building blocks: one Field per key, checking its value's type and
// range and storing it into the Config (server/config.cpp's schema, server/tls_config.cpp's tls
// section). Each problem is a phrase ("expected an integer from 0 to 65535, got -1") that the
// caller prefixes with the file, the line and the key.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/operations/ip_address.hpp"
#include "server/config.hpp"

namespace rivet::server::config_fields {

using json = nlohmann::json;

// A key's setter: checks the value's type and range, stores it, or says what is wrong.
using Setter = std::function<std::string(const json& value, Config& config)>;

struct Field {
    const char* name;
    Setter set;
};

struct Section {
    const char* name;
    std::vector<Field> fields;
    // When the section is present and every key of it was good: what is wrong with the keys
    // together (a key the section cannot do without); empty when nothing is.
    std::function<std::string(const Config& config)> check = nullptr;
};

inline std::string shown(const json& v) {
    std::string s = v.dump();
    return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

template <typename T, typename Ref>
Field integer(const char* name, int64_t min, int64_t max, Ref ref) {
    return {name, [=](const json& v, Config& c) -> std::string {
                std::string want = "expected an integer from " + std::to_string(min) + " to " +
                                   std::to_string(max) + ", got " + shown(v);
                if (!v.is_number_integer()) return want;
                bool in_range = v.is_number_unsigned()
                                    ? v.get<uint64_t>() >= uint64_t(std::max<int64_t>(min, 0)) &&
                                          v.get<uint64_t>() <= uint64_t(max)
                                    : v.get<int64_t>() >= min && v.get<int64_t>() <= max;
                if (!in_range) return want;
                ref(c) = T(v.get<int64_t>());
                return {};
            }};
}

template <typename Ref>
Field number(const char* name, double min, double max, Ref ref) {
    return {name, [=](const json& v, Config& c) -> std::string {
                if (!v.is_number() || v.get<double>() < min || v.get<double>() > max) {
                    std::ostringstream m;
                    m << "expected a number from " << min << " to " << max << ", got " << shown(v);
                    return m.str();
                }
                ref(c) = v.get<double>();
                return {};
            }};
}

// Seconds in the file (fractions allowed), milliseconds inside.
template <typename Ref>
Field seconds(const char* name, double min, double max, Ref ref) {
    return {name, [=](const json& v, Config& c) -> std::string {
                if (!v.is_number() || v.get<double>() < min || v.get<double>() > max) {
                    std::ostringstream m;
                    m << "expected seconds from " << min << " to " << max << ", got " << shown(v);
                    return m.str();
                }
                ref(c) = uint64_t(std::llround(v.get<double>() * 1000));
                return {};
            }};
}

template <typename Ref>
Field boolean(const char* name, Ref ref) {
    return {name, [=](const json& v, Config& c) -> std::string {
                if (!v.is_boolean()) return "expected true or false, got " + shown(v);
                ref(c) = v.get<bool>();
                return {};
            }};
}

template <typename Ref>
Field text(const char* name, Ref ref) {
    return {name, [=](const json& v, Config& c) -> std::string {
                if (!v.is_string() || v.get<std::string>().empty())
                    return "expected a non-empty string, got " + shown(v);
                ref(c) = v.get<std::string>();
                return {};
            }};
}

template <typename Ref>
Field address(const char* name, Ref ref) {
    return {name, [=](const json& v, Config& c) -> std::string {
                app::IpAddress ip;
                if (!v.is_string() || !app::parse_ip(v.get<std::string>(), ip))
                    return "expected a numeric IPv4 or IPv6 address, got " + shown(v);
                ref(c) = v.get<std::string>();
                return {};
            }};
}

template <typename E, typename Ref>
Field choice(const char* name, std::vector<std::pair<const char*, E>> options, Ref ref) {
    return {name, [=](const json& v, Config& c) -> std::string {
                std::string names;
                for (auto& [n, e] : options) {
                    if (v.is_string() && v.get<std::string>() == n) {
                        ref(c) = e;
                        return {};
                    }
                    names += (names.empty() ? "" : ", ") + std::string("\"") + n + "\"";
                }
                return "expected one of " + names + ", got " + shown(v);
            }};
}

// A list of addresses or CIDR networks.
template <typename Ref>
Field networks(const char* name, Ref ref) {
    return {name, [=](const json& v, Config& c) -> std::string {
                const std::string want = "expected a list of addresses or CIDR networks";
                if (!v.is_array()) return want + ", got " + shown(v);
                std::vector<std::string> items;
                for (const auto& e : v) {
                    app::IpNetwork n;
                    if (!e.is_string() || !app::parse_network(e.get<std::string>(), n))
                        return want + "; " + shown(e) + " is not one";
                    items.push_back(e.get<std::string>());
                }
                ref(c) = std::move(items);
                return {};
            }};
}

}  // namespace rivet::server::config_fields

// A Field's reference into the Config: REF(run.port).
#define REF(expr)             \
    [](Config & c) -> auto& { \
        return c.expr;        \
    }
