// MimeTypes: the Content-Type of a file, from its extension.
//
// A built-in table covers the common web types; a mount's options add to it or override it.
// Textual types get "; charset=utf-8" (the table's own entries; overrides are used verbatim).
// Lookups happen when a file enters the cache, not per request. The table's long types also
// serve Response, which keeps one as a view of its literal (interned_content_type) rather than
// a copy.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace rivet::files {

// The type of a file whose extension names none (RFC 9110 §8.3: "unknown binary data").
inline constexpr std::string_view kDefaultContentType = "application/octet-stream";

class MimeTypes {
public:
    explicit MimeTypes(const std::vector<std::pair<std::string, std::string>>& overrides = {},
                       std::string default_type = std::string(kDefaultContentType));

    // The type for a file name or path ("a/b.CSS" -> "text/css; charset=utf-8"); the default
    // for no extension or an unknown one. The view lives as long as this object.
    std::string_view lookup(std::string_view name) const;

private:
    std::unordered_map<std::string, std::string> by_extension_;  // lower-case, without the dot
    std::string default_type_;
};

// `type` as a view of the built-in table's literal (or of kDefaultContentType's) when it is
// one of them and longer than a std::string holds without allocating; empty otherwise. Response
// keeps such a type as that view instead of a copy: one allocation less for each answer that
// carries it (a static file's "text/html; charset=utf-8", a handler's "application/json").
std::string_view interned_content_type(std::string_view type);

}  // namespace rivet::files
