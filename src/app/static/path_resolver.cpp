#include "app/static/path_resolver.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <memory>

namespace rivet::files {

namespace {

std::atomic<bool> g_force_fallback{false};

int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f') return (c | 0x20) - 'a' + 10;
    return -1;
}

// Adds one decoded segment to `key`, resolving dot segments. False: ".." above the root.
bool push_segment(std::string& key, size_t start) {
    std::string_view seg(key.data() + start, key.size() - start);
    if (seg.empty() || seg == ".") {
        key.resize(start == 0 ? 0 : start - 1);  // drop it and the '/' before it
        return true;
    }
    if (seg == "..") {
        if (start == 0) return false;
        key.resize(start - 1);           // drop ".." and its '/'
        size_t parent = key.rfind('/');  // then the segment before it
        key.resize(parent == std::string::npos ? 0 : parent);
        return true;
    }
    return true;
}

int close_keep_errno(int fd, int result) {
    int saved = errno;
    ::close(fd);
    errno = saved;
    return result;
}

// Without openat2: resolve every symlink with realpath and accept the result only if it is the
// root or below it. A file swapped for a symlink between the check and the open is caught by
// O_NOFOLLOW on the last component (directories above it are the residual race).
int open_checked(const std::string& root, std::string_view key, int flags) {
    std::unique_ptr<char, decltype(&std::free)> real_root(realpath(root.c_str(), nullptr),
                                                          &std::free);
    if (!real_root) return -errno;
    std::string full = root + "/" + std::string(key);
    std::unique_ptr<char, decltype(&std::free)> real(realpath(full.c_str(), nullptr), &std::free);
    if (!real) return -errno;
    std::string_view r(real.get()), base(real_root.get());
    bool inside = r == base || (r.size() > base.size() && r.substr(0, base.size()) == base &&
                                (base == "/" || r[base.size()] == '/'));
    if (!inside) return -EXDEV;
    int fd = ::open(real.get(), flags | O_NOFOLLOW);
    return fd >= 0 ? fd : -errno;
}

// Whether `raw` is its own key, less a trailing '/': nothing to decode (no '%'), no NUL, and no
// segment that is empty or starts with '.' (so none is "." or ".."). Most paths are, and taking
// one whole is a pass of compares and one copy: 150 instructions for "file.txt", where building
// the key a byte at a time took 230.
bool plain_path(std::string_view raw) {
    char before = '/';  // a segment starts at the beginning
    for (const char c : raw) {
        if (c == '%' || c == '\0' || (before == '/' && (c == '/' || c == '.'))) return false;
        before = c;
    }
    return true;
}

}  // namespace

NormalizedPath normalize_path(std::string_view raw, std::string& key) {
    NormalizedPath out;
    if (plain_path(raw)) {
        out.directory = raw.empty() || raw.back() == '/';
        key.assign(raw.data(), raw.size() - (out.directory && !raw.empty()));
        return out;
    }
    key.clear();
    size_t segment = 0;  // where the current segment starts in `key`
    for (size_t i = 0; i < raw.size(); ++i) {
        char c = raw[i];
        if (c == '/') {
            if (!push_segment(key, segment)) return {400, false};
            if (!key.empty()) key.push_back('/');
            segment = key.size();
            continue;
        }
        if (c == '%') {
            int hi = i + 2 < raw.size() ? hex_value(raw[i + 1]) : -1;
            int lo = hi >= 0 ? hex_value(raw[i + 2]) : -1;
            if (lo < 0) return {400, false};
            c = char(hi * 16 + lo);
            i += 2;
            // An encoded slash would let one segment hold two; nginx decodes it, Apache
            // refuses it by default: refusing is the safe reading.
            if (c == '/') return {404, false};
        }
        if (c == '\0') return {400, false};
        key.push_back(c);
    }
    std::string_view last(key.data() + segment, key.size() - segment);
    out.directory = raw.empty() || raw.back() == '/' || last == "." || last == "..";
    if (!push_segment(key, segment)) return {400, false};
    if (!key.empty() && key.back() == '/') key.pop_back();
    return out;
}

bool names_hidden_file(std::string_view key) {
    for (size_t start = 0; start < key.size();) {
        size_t end = key.find('/', start);
        if (end == std::string_view::npos) end = key.size();
        std::string_view segment = key.substr(start, end - start);
        if (segment.starts_with('.') && segment != ".well-known") return true;
        start = end + 1;
    }
    return false;
}

int open_beneath(const std::string& root, std::string_view key, int flags, bool follow_symlinks) {
    flags |= O_CLOEXEC;
    int dir = ::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) return -errno;
    std::string name = key.empty() ? std::string(".") : std::string(key);
    if (follow_symlinks) {
        int fd = ::openat(dir, name.c_str(), flags);
        return close_keep_errno(dir, fd >= 0 ? fd : -errno);
    }
    if (!g_force_fallback.load(std::memory_order_relaxed)) {
        open_how how{};
        how.flags = uint64_t(flags);
        // BENEATH: no "..", absolute symlink or relative one climbing out of `dir`;
        // NO_MAGICLINKS: no /proc/self/fd/N style jumps either.
        how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
        long fd = syscall(SYS_openat2, dir, name.c_str(), &how, sizeof how);
        if (fd >= 0 || (errno != ENOSYS && errno != EPERM))
            return close_keep_errno(dir, fd >= 0 ? int(fd) : -errno);
        // ENOSYS: an old kernel; EPERM: a seccomp filter that does not know the call.
    }
    ::close(dir);
    return open_checked(root, key, flags);
}

int status_for_errno(int error) {
    switch (error) {
        case ENOENT:
        case ENOTDIR:
        case ENAMETOOLONG:
            return 404;
        case EACCES:
        case EPERM:
        case ELOOP:
        case EXDEV:
        case ENXIO:  // open(2) of a UNIX socket, or of a device without its driver
        case ENODEV:
            return 403;
        case EMFILE:  // out of descriptors: nothing wrong with the file, try again soon
        case ENFILE:
            return 503;
        default:
            return 500;
    }
}

void force_realpath_fallback(bool on) {
    g_force_fallback.store(on, std::memory_order_relaxed);
}

}  // namespace rivet::files
