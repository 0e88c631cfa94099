// rivet::StaticFiles: a directory served the way nginx serves it.
//
//   rivet::App app;
//   app.serve_static("/assets", "./public/assets", {.max_age = 3600});
//   app.serve_static("/", "./public", {.listing = true});   // API routes still win over files
//
// What a mount does for GET and HEAD:
// - maps the URL path to a file that cannot be outside the root: percent-decoded once, "." and
//   ".." resolved first ("/../x" is a 400), "%2F" and NUL refused, symlinks leading outside the
//   root refused (403) unless `follow_symlinks`; dot files and directories (".env", ".git/")
//   answer 404 unless `dot_files`, but ".well-known/";
// - a directory: "dir" redirects (301) to "dir/", which serves `index` or, failing that, an
//   HTML listing when `listing` is on (streamed, at most `listing_max_entries` rows), else 403;
// - Content-Type from the file's extension, strong ETag (inode, size, mtime) and Last-Modified,
//   If-Match / If-Unmodified-Since (412), If-None-Match / If-Modified-Since (304);
// - byte ranges (single: 206 with Content-Range; several: multipart/byteranges; 416 when none
//   is satisfiable), honoured only when If-Range (if any) still matches;
// - file.br / file.gz beside file, when the client accepts them (Content-Encoding, Vary);
// - small files from memory in the same write as the head, larger ones with sendfile(2).
//
// Each I/O loop keeps its own cache of what it found (stat results, open descriptors of large
// files, bytes of small ones), so the request path takes no lock and makes no system call until
// an entry's TTL passes; then one stat tells whether the file changed. The caches of the
// process hold at most a quarter of RLIMIT_NOFILE descriptors together, close those of entries
// idle past the TTL, and give all of theirs back when open() runs out of descriptors; a file
// that still cannot be opened then is answered 503 with Retry-After: 1 (never 500, never
// cached).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <rivet/request.hpp>
#include <rivet/response.hpp>

namespace rivet {

struct StaticOptions {
    std::string index = "index.html";  // file served for a directory path; "" for none
    bool listing = false;              // directory without index: HTML listing (else 403)
    int64_t max_age = -1;              // Cache-Control: max-age=N; negative: no Cache-Control
    std::string cache_control{};       // the whole Cache-Control value; wins over max_age
    bool follow_symlinks = false;      // symlinks may lead outside the root
    // Names starting with '.' (/.env, /.git/config, a file in a dot directory) answer 404, the
    // rule nginx users write by hand, unless this is on; /.well-known/ is always served (ACME).
    bool dot_files = false;
    // A listing shows at most this many entries (at least 1); past it the page says it was cut.
    // It is streamed: the directory is read in batches between other connections' work, and a
    // slow reader holds these entries and a slice of the page, whatever the directory's size.
    size_t listing_max_entries = 10000;
    // {"ext", "type"} overrides and additions to the built-in table ("ext" without the dot,
    // any case; the type is used verbatim, e.g. "text/x-c; charset=utf-8").
    std::vector<std::pair<std::string, std::string>> mime_types{};
    std::string default_type = "application/octet-stream";
    bool precompressed = true;  // serve file.br / file.gz beside file when accepted
    // Ranges after merging overlapping and adjacent ones; a request asking for more gets the
    // whole file (200), so a response never exceeds the file by more than the part headers.
    unsigned max_ranges = 16;
    // Files this size and larger go out with sendfile(2); smaller ones from memory.
    uint64_t sendfile_threshold = 64 * 1024;

    // The cache, per I/O loop. An entry is trusted for `cache_ttl`, then checked with one
    // stat: reloaded when inode, size or mtime changed, dropped when the file is gone.
    size_t cache_entries = 1024;                // stat results, including "not found"
    uint64_t cache_bytes = 32 * 1024 * 1024;    // bytes of small files held in memory
    uint64_t cache_max_file = 1024 * 1024;      // larger files are never held in memory
    std::chrono::milliseconds cache_ttl{1000};  // 0: check every request
};

// Counters of a mount's caches, summed over its I/O loops.
struct StaticStats {
    uint64_t hits = 0;         // answered from the cache without a system call
    uint64_t misses = 0;       // not in the cache: looked up on disk
    uint64_t revalidated = 0;  // TTL passed, the file was unchanged
    uint64_t changed = 0;      // TTL passed, the file had changed (or vanished): reloaded
    uint64_t evictions = 0;    // dropped to make room (entries or bytes)
    uint64_t entries = 0;      // held now
    uint64_t bytes = 0;        // file bytes held in memory now

    StaticStats& operator+=(const StaticStats& o) {
        hits += o.hits;
        misses += o.misses;
        revalidated += o.revalidated;
        changed += o.changed;
        evictions += o.evictions;
        entries += o.entries;
        bytes += o.bytes;
        return *this;
    }
};

class StaticFiles {
public:
    // Serves the files under `root` for URL paths under `mount` ("/" or "/assets").
    StaticFiles(std::string mount, std::string root, StaticOptions options = {});
    ~StaticFiles();
    StaticFiles(const StaticFiles&) = delete;
    StaticFiles& operator=(const StaticFiles&) = delete;

    // Answers a GET or HEAD whose path lies under the mount. Never throws for bad input: a
    // path that does not map to a readable file gets its 4xx.
    void serve(const Request& req, Response& res);

    // One cache per I/O loop; App::start calls this before the loops start. Requests from
    // elsewhere (a worker, a loop index past `loops`) share one locked cache.
    void set_loops(unsigned loops);

    // On I/O loop `loop`'s thread, about once a second (the App does it): closes the files
    // its cache holds open for entries past their TTL, so that a deleted file's space comes
    // back while the server runs.
    void sweep(unsigned loop);

    StaticStats stats() const;
    const std::string& mount() const;
    const std::string& root() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace rivet
