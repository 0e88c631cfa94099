// The HTML page listing a directory that has no index file (when the mount allows listings).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rivet::files {

struct ListedEntry {
    std::string name;
    bool directory = false;
    uint64_t size = 0;
    int64_t mtime = 0;  // seconds since the epoch
};

// Reads the directory `key` under `root` (opened the same guarded way as files); dot files
// are left out, as nginx's autoindex does, and so are symlinks that a GET could not follow (out
// of the root without `follow_symlinks`, or dangling): a listing tells nothing about what lies
// outside the root. nullopt with `status` (403, 404, 500) on failure.
std::optional<std::vector<ListedEntry>> read_directory(const std::string& root,
                                                       std::string_view key, bool follow_symlinks,
                                                       int& status);

// The page for `url_path` (the decoded path shown in the title, e.g. "/files/"): one row per
// entry, directories first, then by name; names HTML-escaped in the text and percent-encoded
// in the links, which are relative ("./name") so that a name never reads as a URL scheme.
std::string render_listing(std::string_view url_path, std::vector<ListedEntry> entries);

// Helpers, public for the tests.
std::string html_escape(std::string_view text);
std::string percent_encode_path(std::string_view path);  // keeps '/' and unreserved bytes

}  // namespace rivet::files
