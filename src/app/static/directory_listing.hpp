// The HTML page listing a directory that has no index file (when the mount allows listings):
// the directory read a batch of names at a time, and the page written a piece at a time
// (listing_page.hpp puts the two together as a streamed body).
#pragma once

#include <dirent.h>

#include <cstdint>
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

// A directory open for listing, opened the same guarded way as files. Dot files are left out,
// as nginx's autoindex does, and so are symlinks that a GET could not follow (out of the root
// without `follow_symlinks`, or dangling): a listing tells nothing about what lies outside the
// root.
class DirectoryReader {
public:
    DirectoryReader(std::string root, std::string key, bool follow_symlinks);
    ~DirectoryReader();
    DirectoryReader(const DirectoryReader&) = delete;
    DirectoryReader& operator=(const DirectoryReader&) = delete;

    // 0 once open; else the answer for the request (403, 404, 500, 503).
    int status() const { return status_; }
    // Looks at up to `names` more names and appends those listed to `out`, so that one call
    // costs a bounded amount of work whatever the directory's size. False once the directory
    // has no more names (it is closed then).
    bool read_batch(size_t names, std::vector<ListedEntry>& out);

private:
    std::string root_;
    std::string key_;
    bool follow_symlinks_;
    int status_ = 500;
    DIR* dir_ = nullptr;
    std::string path_;  // key/name, for the guarded open of a symlink
};

// Directories first, then by name (bytewise).
void sort_listing(std::vector<ListedEntry>& entries);

// The page's pieces: its head for `url_path` (the decoded path shown in the title, e.g.
// "/files/"), one row per entry, and its end. Names are HTML-escaped in the text (bytes that
// are not UTF-8 shown as U+FFFD, the page being UTF-8) and percent-encoded in the links, which
// are relative ("./name") so that a name never reads as a URL scheme and every link leads to
// the exact bytes of its name. `cut_at`: the listing stopped at that many entries and the end
// says so (0: it is whole).
void append_listing_head(std::string& out, std::string_view url_path);
void append_listing_row(std::string& out, const ListedEntry& entry);
void append_listing_end(std::string& out, size_t cut_at);

// Helpers, public for the tests (html_escape is rivet::html_escape, rivet/html.hpp).
void append_html_text(std::string& out, std::string_view text);  // escaped, as UTF-8
std::string percent_encode_path(std::string_view path);          // keeps '/' and unreserved bytes

}  // namespace rivet::files
