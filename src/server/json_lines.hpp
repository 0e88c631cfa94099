// Where each key of a JSON document is, by line: nlohmann::json keeps no positions, and a
// configuration error is only useful when it says which line of the file to fix.
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace rivet::server {

// Maps the JSON pointer of every object member and array element ("/server/port",
// "/rate_limiting/allow/0") to the 1-based line where it starts. Expects a syntactically valid
// document (parse it first); on anything else it returns what it found so far.
std::map<std::string, int> json_key_lines(std::string_view text);

// The 1-based line of a byte offset (for parse errors, which report bytes).
int line_of_offset(std::string_view text, size_t offset);

}  // namespace rivet::server
