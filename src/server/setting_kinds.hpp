// The kinds of settings (server/settings.hpp): an integer, seconds, a number, a switch, a text, an
// address, a choice, a list of networks. Each makes a Value from a range and a reference into the
// Config, REF(run.port): the same checks for the file's value and for a flag's text.
#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "app/operations/ip_address.hpp"
#include "server/settings.hpp"

namespace rivet::server::settings {

// A value in a problem: at most 60 characters of its JSON.
inline std::string shown(const json& v) {
    std::string s = v.dump();
    return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

// A number as a range is written: 0.001, 3600, 1e+09.
inline std::string number_text(double v) {
    std::ostringstream s;
    s << v;
    return s.str();
}

// A flag's text as a JSON number: the whole text, finite.
inline std::optional<json> integer_text(const std::string& text) {
    int64_t v = 0;
    auto r = std::from_chars(text.data(), text.data() + text.size(), v);
    if (r.ec != std::errc() || r.ptr != text.data() + text.size()) return std::nullopt;
    return json(v);
}
inline std::optional<json> real_text(const std::string& text) {
    double v = 0;
    auto r = std::from_chars(text.data(), text.data() + text.size(), v);
    if (r.ec != std::errc() || r.ptr != text.data() + text.size() || !std::isfinite(v))
        return std::nullopt;
    return json(v);
}
// A flag never takes an empty text: "--root=" is a mistake, not "no root".
inline std::optional<json> string_text(const std::string& text) {
    if (text.empty()) return std::nullopt;
    return json(text);
}

inline bool in_range(const json& v, double min, double max) {
    return v.is_number() && std::isfinite(v.get<double>()) && v.get<double>() >= min &&
           v.get<double>() <= max;
}

template <typename T, typename Ref>
Value integer(int64_t min, int64_t max, Ref ref) {
    std::string expected = "an integer from " + std::to_string(min) + " to " + std::to_string(max);
    return {expected,
            [=](const json& v, Config& c) -> std::string {
                std::string want = "expected " + expected + ", got " + shown(v);
                if (!v.is_number_integer()) return want;
                bool ok = v.is_number_unsigned()
                              ? v.get<uint64_t>() >= uint64_t(std::max<int64_t>(min, 0)) &&
                                    v.get<uint64_t>() <= uint64_t(max)
                              : v.get<int64_t>() >= min && v.get<int64_t>() <= max;
                if (!ok) return want;
                ref(c) = T(v.get<int64_t>());
                return {};
            },
            [=](const Config& c) { return json(ref(c)); }, integer_text};
}

template <typename Ref>
Value number(double min, double max, Ref ref) {
    std::string expected = "a number from " + number_text(min) + " to " + number_text(max);
    return {expected,
            [=](const json& v, Config& c) -> std::string {
                if (!in_range(v, min, max)) return "expected " + expected + ", got " + shown(v);
                ref(c) = v.get<double>();
                return {};
            },
            [=](const Config& c) { return json(ref(c)); }, real_text};
}

// Seconds in the file and on the command line (fractions allowed), milliseconds inside.
template <typename Ref>
Value seconds(double min, double max, Ref ref) {
    std::string expected = "seconds from " + number_text(min) + " to " + number_text(max);
    return {expected,
            [=](const json& v, Config& c) -> std::string {
                if (!in_range(v, min, max)) return "expected " + expected + ", got " + shown(v);
                ref(c) = uint64_t(std::llround(v.get<double>() * 1000));
                return {};
            },
            [=](const Config& c) { return json(double(ref(c)) / 1000.0); }, real_text};
}

// true or false; on the command line, a switch (Flag::switch_value).
template <typename Ref>
Value boolean(Ref ref) {
    return {{},
            [=](const json& v, Config& c) -> std::string {
                if (!v.is_boolean()) return "expected true or false, got " + shown(v);
                ref(c) = v.get<bool>();
                return {};
            },
            [=](const Config& c) { return json(bool(ref(c))); },
            [](const std::string&) { return std::optional<json>(); }};
}

// A string; `what` names it in problems ("a user name"). Empty only when `may_be_empty`.
template <typename Ref>
Value text(Ref ref, std::string what = "a non-empty string", bool may_be_empty = false) {
    return {{},
            [=](const json& v, Config& c) -> std::string {
                if (!v.is_string() || (!may_be_empty && v.get<std::string>().empty()))
                    return "expected " + what + ", got " + shown(v);
                ref(c) = v.get<std::string>();
                return {};
            },
            [=](const Config& c) { return json(ref(c)); },
            string_text};
}

// A numeric IPv4 or IPv6 address; "" too when `may_be_empty` (then: another setting's).
template <typename Ref>
Value address(Ref ref, bool may_be_empty = false) {
    return {"a numeric IPv4 or IPv6 address",
            [=](const json& v, Config& c) -> std::string {
                app::IpAddress ip;
                bool empty = v.is_string() && v.get<std::string>().empty();
                if (!(empty && may_be_empty) &&
                    (!v.is_string() || !app::parse_ip(v.get<std::string>(), ip)))
                    return "expected a numeric IPv4 or IPv6 address, got " + shown(v);
                ref(c) = v.get<std::string>();
                return {};
            },
            [=](const Config& c) { return json(ref(c)); }, string_text};
}

template <typename E, typename Ref>
Value choice(std::vector<std::pair<const char*, E>> options, Ref ref) {
    return {{},
            [=](const json& v, Config& c) -> std::string {
                std::string names;
                for (auto& [n, e] : options) {
                    if (v.is_string() && v.get<std::string>() == n) {
                        ref(c) = e;
                        return {};
                    }
                    names += (names.empty() ? "" : ", ") + std::string("\"") + n + "\"";
                }
                return "expected one of " + names + ", got " + shown(v);
            },
            [=](const Config& c) {
                for (auto& [n, e] : options)
                    if (ref(c) == e) return json(n);
                return json();
            },
            string_text};
}

// A list; on the command line, comma-separated ("10.0.0.0/8,::1").
inline std::optional<json> list_text(const std::string& text) {
    json items = json::array();
    for (size_t at = 0; at <= text.size();) {
        size_t comma = std::min(text.find(',', at), text.size());
        items.push_back(text.substr(at, comma - at));
        at = comma + 1;
    }
    return items;
}

// A list of addresses or CIDR networks.
template <typename Ref>
Value networks(Ref ref) {
    return {{},
            [=](const json& v, Config& c) -> std::string {
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
            },
            [=](const Config& c) { return json(ref(c)); },
            list_text,
            true};
}

// The flags of a setting: `--name METAVAR`, taking the setting's own values.
inline Flag flag(std::string name, std::string metavar, std::vector<std::string> aliases = {}) {
    return {std::move(name), std::move(metavar), std::move(aliases)};
}
// A flag that takes values of its own, not the setting's (Flag::value).
inline Flag own_value(Flag f, Value value, std::string help) {
    f.value = std::move(value);
    f.help = std::move(help);
    return f;
}
// A flag without a value: it sets a switch to `sets`.
inline Flag switch_flag(std::string name, bool sets, std::string help) {
    Flag f{std::move(name), ""};
    f.switch_value = sets;
    f.help = std::move(help);
    return f;
}

}  // namespace rivet::server::settings

// A Value's reference into the Config, for reading and writing: REF(run.port).
#define REF(expr)                \
    [](auto& config_) -> auto& { \
        return config_.expr;     \
    }
