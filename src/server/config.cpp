#include "server/config.hpp"

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <sstream>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/json_depth.hpp"
#include "net/ip_network.hpp"
#include "server/json_lines.hpp"
#include "server/setting_kinds.hpp"

namespace rivet::server {

namespace {

constexpr size_t kMaxConfigDepth = 16;

using settings::json;

}  // namespace

std::string check_proxy_trusted(const std::vector<std::string>& entries) {
    if (entries.size() > kMaxProxyTrusted)
        return "more than " + std::to_string(kMaxProxyTrusted) + " addresses or networks";
    for (const auto& e : entries) {
        net::IpNetwork n;
        if (!net::parse_network(e, n)) return "\"" + e + "\" is not an address or CIDR network";
    }
    return {};
}

Config default_config() {
    Config c;
    c.run.ops.admin.metrics = true;
    c.run.ops.admin.status_page = true;
    c.run.ops.admin.health = true;
    c.run.timeouts.drain_grace_ms = kDefaultDrainGraceMs;
    return c;
}

void apply_cache_options(Config& c) {
    auto& files = c.demo.files;
    files.cache_bytes = c.cache.enabled ? uint64_t(c.cache.max_size_mb) << 20 : 0;
    files.cache_ttl =
        std::chrono::milliseconds(c.cache.enabled ? uint64_t(c.cache.ttl_seconds) * 1000 : 0);
}

std::vector<std::string> apply_config_text(const std::string& text, const std::string& name,
                                           Config& config) {
    std::vector<std::string> problems;
    // The schema nests three levels (an object, its sections, a list of networks); a document
    // much deeper is a mistake or an attack, and would cost memory per level below.
    if (size_t at = core::json_too_deep_at(text, kMaxConfigDepth); at != std::string_view::npos)
        return {name + ":" + std::to_string(line_of_offset(text, at)) + ": nested deeper than " +
                std::to_string(kMaxConfigDepth) + " levels; the configuration needs 3"};
    json doc;
    try {
        doc = json::parse(text);
    } catch (const json::parse_error& e) {
        // e.what() reads "[json.exception.parse_error.101] parse error at line 3, column 5:
        // syntax error ..."; keep what follows the first ": " after the position.
        std::string what = e.what();
        auto at = what.find("syntax error");
        std::string why = at == std::string::npos ? what : what.substr(at);
        problems.push_back(name + ":" + std::to_string(line_of_offset(text, e.byte)) +
                           ": invalid JSON: " + why);
        return problems;
    }
    auto lines = json_key_lines(text);
    auto where = [&](const std::string& pointer) {
        auto it = lines.find(pointer);
        return name + ":" + std::to_string(it == lines.end() ? 1 : it->second) + ": ";
    };
    if (!doc.is_object()) return {where("") + "the configuration must be a JSON object"};

    const auto& sections = settings::schema();
    for (auto& [key, value] : doc.items()) {
        bool known = false;
        for (const auto& s : sections) known = known || key == s.name;
        if (!known) problems.push_back(where("/" + key) + "unknown key \"" + key + "\"");
    }
    Config next = config;
    for (const auto& s : sections) {
        auto it = doc.find(s.name);
        if (it == doc.end()) continue;
        std::string base = "/" + s.name;
        if (!it->is_object()) {
            problems.push_back(where(base) + s.name + ": expected an object, got " +
                               settings::shown(*it));
            continue;
        }
        for (auto& [key, value] : it->items()) {
            bool known = false;
            for (const auto& setting : s.settings) known = known || key == setting.name;
            if (!known)
                problems.push_back(where(base + "/" + key) + "unknown key \"" + s.name + "." + key +
                                   "\"");
        }
        // In schema order, so that a broad key (server.socket_timeout) comes before the
        // narrow ones that refine it (limits.*), whatever the file's order.
        bool good = true;
        for (const auto& setting : s.settings) {
            auto v = it->find(setting.name);
            if (v == it->end()) continue;
            if (auto problem = setting.value.set(*v, next); !problem.empty()) {
                problems.push_back(where(base + "/" + setting.name) + s.name + "." + setting.name +
                                   ": " + problem);
                good = false;
            }
        }
        if (good && s.check)
            if (auto problem = s.check(next); !problem.empty())
                problems.push_back(where(base) + s.name + ": " + problem);
    }
    if (problems.empty()) config = std::move(next);
    return problems;
}

namespace {

// What a path that is not a regular file is, for the refusal.
const char* file_kind(mode_t mode) {
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISSOCK(mode)) return "a socket";
    if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
    return "a special file";
}

}  // namespace

std::vector<std::string> apply_config_file(const std::string& path, Config& config) {
    // Plain system calls: a directory or an unreadable file must say so, not read as empty.
    auto refuse = [&](const std::string& why) {
        return std::vector<std::string>{path + ": cannot read the configuration file: " + why};
    };
    auto not_regular = [&](mode_t mode) {
        return refuse(std::string("it is ") + file_kind(mode) + ", not a regular file");
    };
    // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, and SIGHUP
    // reads this file on the thread that also takes SIGTERM. Only a regular file is read (a
    // FIFO or a device could stall or never end), and O_NONBLOCK changes nothing for it.
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        int err = errno;
        struct stat st {};
        if (err == ENXIO && ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
            return not_regular(st.st_mode);  // a UNIX socket cannot be opened at all
        return refuse(std::strerror(err));
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        int err = errno;
        ::close(fd);
        return refuse(std::strerror(err));
    }
    if (!S_ISREG(st.st_mode)) {
        ::close(fd);
        return not_regular(st.st_mode);
    }
    std::string text;
    char buf[16384];
    for (;;) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            int err = errno;
            ::close(fd);
            return refuse(std::strerror(err));
        }
        if (n == 0) break;
        text.append(buf, size_t(n));
        if (text.size() > (16 << 20)) {
            ::close(fd);
            return {path + ": cannot read the configuration file: larger than 16 MiB"};
        }
    }
    ::close(fd);
    return apply_config_text(text, path, config);
}

}  // namespace rivet::server
