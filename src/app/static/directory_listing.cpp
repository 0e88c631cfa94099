#include "app/static/directory_listing.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <ctime>

#include "app/static/path_resolver.hpp"

namespace rivet::files {

std::optional<std::vector<ListedEntry>> read_directory(const std::string& root,
                                                       std::string_view key, bool follow_symlinks,
                                                       int& status) {
    int fd = open_beneath(root, key, O_RDONLY | O_DIRECTORY, follow_symlinks);
    if (fd < 0) {
        status = status_for_errno(-fd);
        return std::nullopt;
    }
    DIR* dir = fdopendir(fd);  // owns fd from here on
    if (!dir) {
        status = status_for_errno(errno);
        ::close(fd);
        return std::nullopt;
    }
    std::vector<ListedEntry> out;
    std::string path;  // key/name, for the guarded open of a symlink
    while (dirent* d = readdir(dir)) {
        std::string_view name = d->d_name;
        if (name.empty() || name.front() == '.') continue;
        struct stat st;
        if (fstatat(fd, d->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // gone meanwhile
        if (S_ISLNK(st.st_mode)) {
            // What a request for it would serve: the target's size and date, found the same
            // guarded way as a GET finds it. A link that leaves the root (or dangles) is left
            // out: its row would tell what lies outside, or lead nowhere.
            path.assign(key);
            if (!path.empty()) path += '/';
            path += name;
            int target = open_beneath(root, path, O_PATH, follow_symlinks);
            bool found = target >= 0 && fstat(target, &st) == 0;
            if (target >= 0) ::close(target);
            if (!found) continue;
        }
        ListedEntry e;
        e.name = std::string(name);
        e.directory = S_ISDIR(st.st_mode);
        e.size = uint64_t(st.st_size);
        e.mtime = int64_t(st.st_mtim.tv_sec);
        out.push_back(std::move(e));
    }
    closedir(dir);
    return out;
}

std::string html_escape(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        switch (c) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '"':
                out += "&quot;";
                break;
            case '\'':
                out += "&#39;";
                break;
            default:
                out.push_back(c);
        }
    }
    return out;
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

std::string render_listing(std::string_view url_path, std::vector<ListedEntry> entries) {
    std::sort(entries.begin(), entries.end(), [](const ListedEntry& a, const ListedEntry& b) {
        if (a.directory != b.directory) return a.directory;
        return a.name < b.name;
    });
    std::string title = "Index of " + html_escape(url_path);
    std::string out;
    out.reserve(512 + entries.size() * 160);
    out += "<!doctype html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n<title>";
    out += title;
    out +=
        "</title>\n<style>body{font:15px/1.5 system-ui,sans-serif;margin:2rem}"
        "td{padding:.15rem 1.5rem .15rem 0}td.n{text-align:right}</style>\n"
        "</head>\n<body>\n<h1>";
    out += title;
    out += "</h1>\n<table>\n";
    if (url_path != "/") out += "<tr><td><a href=\"../\">../</a></td><td></td><td></td></tr>\n";
    for (const auto& e : entries) {
        std::string shown = html_escape(e.name) + (e.directory ? "/" : "");
        out += "<tr><td><a href=\"./";
        out += html_escape(percent_encode_path(e.name));  // '/' cannot occur in a name
        if (e.directory) out += '/';
        out += "\">";
        out += shown;
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
    out += "</table>\n</body>\n</html>\n";
    return out;
}

}  // namespace rivet::files
