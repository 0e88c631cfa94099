#include "app/static/directory_listing.hpp"

#include <rivet/html.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <ctime>

#include "app/static/path_resolver.hpp"
#include "http/websocket/utf8.hpp"

namespace rivet::files {

DirectoryReader::DirectoryReader(std::string root, std::string key, bool follow_symlinks)
    : root_(std::move(root)), key_(std::move(key)), follow_symlinks_(follow_symlinks) {
    int fd = open_beneath(root_, key_, O_RDONLY | O_DIRECTORY, follow_symlinks_);
    if (fd < 0) {
        status_ = status_for_errno(-fd);
        return;
    }
    dir_ = fdopendir(fd);  // owns fd from here on
    if (!dir_) {
        status_ = status_for_errno(errno);
        ::close(fd);
        return;
    }
    status_ = 0;
}

DirectoryReader::~DirectoryReader() {
    if (dir_) closedir(dir_);
}

bool DirectoryReader::read_batch(size_t names, std::vector<ListedEntry>& out) {
    if (!dir_) return false;
    const int fd = dirfd(dir_);
    for (size_t looked = 0; looked < names; ++looked) {
        dirent* d = readdir(dir_);
        if (!d) {  // the end (or a read error: the page ends with what was found)
            closedir(dir_);
            dir_ = nullptr;
            return false;
        }
        std::string_view name = d->d_name;
        if (name.empty() || name.front() == '.') continue;
        struct stat st;
        if (fstatat(fd, d->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // gone meanwhile
        if (S_ISLNK(st.st_mode)) {
            // What a request for it would serve: the target's size and date, found the same
            // guarded way as a GET finds it. A link that leaves the root (or dangles) is left
            // out: its row would tell what lies outside, or lead nowhere.
            path_.assign(key_);
            if (!path_.empty()) path_ += '/';
            path_ += name;
            int target = open_beneath(root_, path_, O_PATH, follow_symlinks_);
            bool found = target >= 0 && fstat(target, &st) == 0;
            if (target >= 0) ::close(target);
            if (!found) continue;
        }
        out.push_back({std::string(name), S_ISDIR(st.st_mode), uint64_t(st.st_size),
                       int64_t(st.st_mtim.tv_sec)});
    }
    return true;
}

void sort_listing(std::vector<ListedEntry>& entries) {
    std::sort(entries.begin(), entries.end(), [](const ListedEntry& a, const ListedEntry& b) {
        if (a.directory != b.directory) return a.directory;
        return a.name < b.name;
    });
}

void append_html_text(std::string& out, std::string_view text) {
    // A file name is bytes, the page UTF-8: a sequence that is not UTF-8 (Latin-1 names, a cut
    // code point) shows as U+FFFD, one per maximal bad part, as WHATWG's decoder does.
    size_t i = 0;
    while (i < text.size()) {
        if (static_cast<unsigned char>(text[i]) < 0x80) {
            append_html_escaped(out, text.substr(i++, 1));
            continue;
        }
        http::ws::Utf8Validator code_point;
        size_t end = i;
        while (end < text.size() && code_point.feed(text.substr(end, 1))) {
            ++end;
            if (code_point.complete()) break;
        }
        if (end > i && code_point.complete()) {
            out.append(text.substr(i, end - i));
        } else {
            out += "\xEF\xBF\xBD";
            end = std::max(end, i + 1);  // the byte that failed starts the next attempt
        }
        i = end;
    }
}

std::string percent_encode_path(std::string_view path) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    std::string out;
    out.reserve(path.size());
    for (unsigned char c : path) {
        bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '.' || c == '_' || c == '~' || c == '/';
        if (keep) {
            out.push_back(char(c));
        } else {
            out.push_back('%');
            out.push_back(kHex[c >> 4]);
            out.push_back(kHex[c & 15]);
        }
    }
    return out;
}

void append_listing_head(std::string& out, std::string_view url_path) {
    std::string title = "Index of ";
    append_html_text(title, url_path);
    out += "<!doctype html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n<title>";
    out += title;
    out +=
        "</title>\n<style>body{font:15px/1.5 system-ui,sans-serif;margin:2rem}"
        "td{padding:.15rem 1.5rem .15rem 0}td.n{text-align:right}</style>\n"
        "</head>\n<body>\n<h1>";
    out += title;
    out += "</h1>\n<table>\n";
    if (url_path != "/") out += "<tr><td><a href=\"../\">../</a></td><td></td><td></td></tr>\n";
}

void append_listing_row(std::string& out, const ListedEntry& e) {
    out += "<tr><td><a href=\"./";
    out += percent_encode_path(e.name);  // '/' cannot occur in a name; nothing left to escape
    if (e.directory) out += '/';
    out += "\">";
    append_html_text(out, e.name);
    if (e.directory) out += '/';
    out += "</a></td><td>";
    char date[32] = "";
    time_t t = time_t(e.mtime);
    tm g;
    if (gmtime_r(&t, &g)) strftime(date, sizeof date, "%Y-%m-%d %H:%M", &g);
    out += date;
    out += "</td><td class=\"n\">";
    out += e.directory ? std::string("-") : std::to_string(e.size);
    out += "</td></tr>\n";
}

void append_listing_end(std::string& out, size_t cut_at) {
    out += "</table>\n";
    if (cut_at > 0) {
        out += "<p><strong>Listing cut at ";
        out += std::to_string(cut_at);
        out += " entries</strong>: the directory holds more. These are the first ";
        out += std::to_string(cut_at);
        out += " it gave, sorted.</p>\n";
    }
    out += "</body>\n</html>\n";
}

}  // namespace rivet::files
