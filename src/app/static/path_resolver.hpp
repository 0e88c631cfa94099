// From a URL path to a file under a root, without a way out of the root.
//
// Two steps, both needed:
// 1. normalize_path: the path as sent becomes a key ("css/site.css") by percent-decoding once,
//    then resolving "." and ".." lexically. Anything that would decode to '/' (an encoded
//    slash) or NUL is refused, as is a ".." that climbs above the root: what remains is a
//    plain relative path with no dot segments, so the string itself cannot escape.
// 2. open_beneath: opens the key relative to the root so that symlinks cannot escape either:
//    openat2(RESOLVE_BENEATH) where the kernel has it (Linux 5.6+), else realpath and a prefix
//    check. With follow_symlinks the key is opened as is.
#pragma once

#include <string>
#include <string_view>

namespace rivet::files {

struct NormalizedPath {
    int status = 0;          // 0: usable; else the answer (400 malformed, 404 encoded slash)
    bool directory = false;  // the path named a directory: it ended in '/' (or "/." "/..")
};

// `raw` is the part of the URL path under the mount, as sent, without its leading '/'
// ("css/site.css", "" for the mount itself). Writes the key into `key` (no leading or trailing
// '/', "" for the root).
NormalizedPath normalize_path(std::string_view raw, std::string& key);

// Whether `key` (from normalize_path) names a dot file or passes through a dot directory
// (".env", ".git/config"), other than ".well-known" (RFC 8615: ACME's challenges live there).
bool names_hidden_file(std::string_view key);

// Opens `key` (from normalize_path) under `root` with open(2) `flags` (O_CLOEXEC is added).
// Returns the descriptor, or -errno: -ENOENT, -EXDEV (a symlink leading out of the root) ...
int open_beneath(const std::string& root, std::string_view key, int flags, bool follow_symlinks);

// The answer nginx gives for an errno from opening a file: 404 (ENOENT, ENOTDIR,
// ENAMETOOLONG), 403 (EACCES, EPERM, ELOOP, EXDEV: not allowed, or leaves the root; ENXIO,
// ENODEV: a UNIX socket or a device, there but nothing to read), 503 (EMFILE, ENFILE: out of
// descriptors, answered with Retry-After), else 500.
int status_for_errno(int error);

// Tests: take the realpath fallback even where openat2 exists.
void force_realpath_fallback(bool on);

}  // namespace rivet::files
