#include "server/json_lines.hpp"

#include <vector>

namespace rivet::server {

namespace {

// A JSON pointer token escapes '~' and '/' (RFC 6901).
std::string pointer_token(std::string_view key) {
    std::string out;
    for (char c : key) {
        if (c == '~')
            out += "~0";
        else if (c == '/')
            out += "~1";
        else
            out += c;
    }
    return out;
}

}  // namespace

int line_of_offset(std::string_view text, size_t offset) {
    int line = 1;
    for (size_t i = 0; i < offset && i < text.size(); ++i)
        if (text[i] == '\n') ++line;
    return line;
}

std::map<std::string, int> json_key_lines(std::string_view text) {
    // One pass over the structure: strings are skipped whole (escapes included), and only the
    // characters that open, separate or close members matter.
    struct Level {
        bool object;
        size_t path_len;   // length of the container's own pointer
        size_t index = 0;  // arrays: the next element's index
        bool expect_key = true;
    };
    std::map<std::string, int> lines;
    std::vector<Level> stack;
    std::string path;
    int line = 1;
    // Called where a value starts: arrays name it by index, objects already did by key.
    auto value_starts = [&] {
        if (stack.empty() || stack.back().object) return;
        Level& l = stack.back();
        path.resize(l.path_len);
        path += '/';
        path += std::to_string(l.index);
        lines.emplace(path, line);
    };
    bool in_value = false;  // a scalar of the current array element has been seen
    for (size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        if (c == '\n') {
            ++line;
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\r') continue;
        if (c == '"') {
            std::string raw;
            for (++i; i < text.size() && text[i] != '"'; ++i) {
                if (text[i] == '\\' && i + 1 < text.size()) raw += text[i++];
                raw += text[i];
            }
            if (!stack.empty() && stack.back().object && stack.back().expect_key) {
                // Keys are matched as written; an escaped key is rare enough in a configuration
                // file to be matched by its raw spelling only.
                path.resize(stack.back().path_len);
                path += '/';
                path += pointer_token(raw);
                lines.emplace(path, line);
                stack.back().expect_key = false;
            } else if (!in_value) {
                value_starts();
                in_value = true;
            }
            continue;
        }
        switch (c) {
            case '{':
            case '[':
                if (!in_value) value_starts();
                stack.push_back({c == '{', path.size()});
                in_value = false;
                break;
            case '}':
            case ']':
                if (stack.empty()) return lines;
                path.resize(stack.back().path_len);
                stack.pop_back();
                in_value = true;  // the container was the enclosing member's value
                break;
            case ',':
                if (stack.empty()) return lines;
                if (stack.back().object)
                    stack.back().expect_key = true;
                else
                    ++stack.back().index;
                path.resize(stack.back().path_len);
                in_value = false;
                break;
            case ':':
                in_value = false;
                break;
            default:  // numbers, true, false, null
                if (!in_value) {
                    value_starts();
                    in_value = true;
                }
                break;
        }
    }
    return lines;
}

}  // namespace rivet::server
