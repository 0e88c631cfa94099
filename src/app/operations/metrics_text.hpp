// The pieces of the Prometheus text format (0.0.4) that every exporter here writes with.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>
#include <type_traits>

namespace rivet::app::metrics_text {

// A label value: backslash, double quote and newline escaped (exposition format).
inline std::string label(std::string_view v) {
    std::string out;
    for (char c : v) {
        if (c == '\\' || c == '"') out += '\\';
        if (c == '\n') {
            out += "\\n";
            continue;
        }
        out += c;
    }
    return out;
}

inline void line(std::string& out, const char* text) {
    out += text;
    out += '\n';
}

template <typename T>
void sample(std::string& out, const std::string& name_and_labels, T value) {
    out += name_and_labels;
    out += ' ';
    if constexpr (std::is_floating_point_v<T>) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.6f", double(value));
        out += buf;
    } else {
        out += std::to_string(value);
    }
    out += '\n';
}

// A metric family's HELP and TYPE lines.
inline void family(std::string& out, std::string_view name, const char* type, const char* help) {
    out.append("# HELP ").append(name).append(" ").append(help).append("\n# TYPE ");
    out.append(name).append(" ").append(type).append("\n");
}

}  // namespace rivet::app::metrics_text
