// FileCache: what one I/O loop knows about the files of one mount.
//
// An LRU of lookups keyed by normalized path: stat results (including "not found" and
// "forbidden", so that a flood of misses stays in memory too), the open descriptor of a file
// sent with sendfile, the bytes of a small file, and what is derived from them once (ETag,
// Last-Modified, Content-Type). An entry is trusted for `ttl_ms`; after that, the next lookup
// checks the path again with one open(O_PATH)+fstat and reloads the entry if the file changed
// (inode, size, mtime or ctime) or vanished.
//
// Not thread-safe: each loop owns its cache. Counters are single-writer atomics, readable from
// any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include <rivet/response.hpp>
#include <rivet/static_files.hpp>

#include "app/static/mime_types.hpp"

namespace rivet::files {

struct FileEntry {
    enum class Kind : uint8_t { File, Directory, Error };
    Kind kind = Kind::Error;
    int status = 404;  // Error: the answer (404, 403, 500)
    uint64_t dev = 0, ino = 0, size = 0;
    int64_t mtime_ns = 0, ctime_ns = 0;
    // File: exactly one of these carries the bytes.
    bool in_memory = false;
    std::string bytes;                     // the whole file, when small enough
    std::shared_ptr<const OpenFile> file;  // else the open file, for sendfile
    std::string etag;                      // "\"<inode>-<size>-<mtime ns>\"" in hex
    std::string last_modified;             // IMF-fixdate
    int64_t mtime_s = 0;
    std::string_view content_type;  // from the name's extension (lives in the MimeTypes)
};

struct CacheLimits {
    size_t entries = 1024;
    uint64_t bytes = 32 * 1024 * 1024;
    uint64_t max_file = 1024 * 1024;    // larger files are never held in memory
    uint64_t memory_below = 64 * 1024;  // and neither are files this size or larger
    uint64_t ttl_ms = 1000;
    bool follow_symlinks = false;
};

struct CacheCounters {
    std::atomic<uint64_t> hits{0}, misses{0}, revalidated{0}, changed{0}, evictions{0};
    std::atomic<uint64_t> entries{0}, bytes{0};

    StaticStats read() const {  // from any thread
        constexpr auto r = std::memory_order_relaxed;
        return {hits.load(r),      misses.load(r),  revalidated.load(r), changed.load(r),
                evictions.load(r), entries.load(r), bytes.load(r)};
    }
};

class FileCache {
public:
    FileCache(std::string root, const CacheLimits& limits, const MimeTypes& types);
    ~FileCache();
    FileCache(const FileCache&) = delete;
    FileCache& operator=(const FileCache&) = delete;

    // The entry for `key` (from normalize_path), looked up on disk when missing or stale.
    // `now_ms` is a monotonic clock. Never null.
    std::shared_ptr<const FileEntry> find(std::string_view key, uint64_t now_ms);

    const CacheCounters& counters() const { return counters_; }
    size_t size() const { return lru_.size(); }

private:
    struct Node {
        std::string key;
        std::shared_ptr<const FileEntry> entry;
        uint64_t checked_ms;
    };
    using List = std::list<Node>;

    std::shared_ptr<FileEntry> load(std::string_view key) const;
    bool unchanged(std::string_view key, const FileEntry& entry) const;
    void insert(std::string_view key, std::shared_ptr<const FileEntry> entry, uint64_t now_ms);
    void erase(List::iterator it);
    static void bump(std::atomic<uint64_t>& counter, int64_t by = 1) {
        counter.store(counter.load(std::memory_order_relaxed) + uint64_t(by),
                      std::memory_order_relaxed);
    }

    std::string root_;
    CacheLimits limits_;
    const MimeTypes& types_;
    List lru_;                                                    // most recently used first
    std::unordered_map<std::string_view, List::iterator> index_;  // keys point into lru_ nodes
    uint64_t bytes_ = 0;
    CacheCounters counters_;
};

}  // namespace rivet::files
