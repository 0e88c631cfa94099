// MimeTypes: the Content-Type of a file, from its extension.
//
// A built-in table covers the common web types; a mount's options add to it or override it.
// Textual types get "; charset=utf-8" (the table's own entries; overrides are used verbatim).
// Lookups happen when a file enters the cache, not per request.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace rivet::files {

class MimeTypes {
public:
    explicit MimeTypes(const std::vector<std::pair<std::string, std::string>>& overrides = {},
                       std::string default_type = "application/octet-stream");

    // The type for a file name or path ("a/b.CSS" -> "text/css; charset=utf-8"); the default
    // for no extension or an unknown one. The view lives as long as this object.
    std::string_view lookup(std::string_view name) const;

private:
    std::unordered_map<std::string, std::string> by_extension_;  // lower-case, without the dot
    std::string default_type_;
};

}  // namespace rivet::files
