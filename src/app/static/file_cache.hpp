// FileCache: what one I/O loop knows about the files of one mount.
//
// An LRU of lookups keyed by normalized path: stat results (including "not found" and
// "forbidden", so that a flood of misses stays in memory too), the open descriptor of a file
// sent with sendfile, the bytes of a small file, and what is derived from them once (ETag,
// Last-Modified, Content-Type). An entry is trusted for `ttl_ms`; after that, the next lookup
// checks the path again with one open(O_PATH)+fstat and reloads the entry if the file changed
// (inode, size, mtime or ctime) or vanished.
//
// Descriptors: an entry sent with sendfile holds its file open. All caches of the process
// share one DescriptorBudget (by default a quarter of RLIMIT_NOFILE), so that cached files can
// never starve connections: past the budget a cache closes its least recently used open files,
// and when it has none to close the file is served without being kept. When open() itself
// fails for want of descriptors (EMFILE, ENFILE), the cache closes all of its open files and
// tries once more; failing again, the answer is 503 (not cached). sweep() closes the files
// of entries past their TTL, so a deleted file's space comes back while the server runs.
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
    bool type_is_literal = false;   // content_type is interned (files::interned_content_type)
    // Until when this file is known to have no precompressed variant (".br", ".gz"): as long as
    // the cache trusts the missing variants' entries. Until then a request skips their lookups.
    // A memo on a shared entry, so mutable; only the owning cache's loop reads and writes it.
    mutable uint64_t no_variants_until_ms = 0;
};

// How many descriptors the file caches of the process may hold open, together.
class DescriptorBudget {
public:
    explicit DescriptorBudget(size_t limit) : limit_(limit) {}
    // The process's: a quarter of the RLIMIT_NOFILE soft limit when first asked (at least 1).
    static DescriptorBudget& process();

    bool take() {  // false: the budget is spent
        size_t held = held_.load(std::memory_order_relaxed);
        while (held < limit_)
            if (held_.compare_exchange_weak(held, held + 1, std::memory_order_relaxed)) return true;
        return false;
    }
    void give_back(size_t n = 1) { held_.fetch_sub(n, std::memory_order_relaxed); }
    size_t held() const { return held_.load(std::memory_order_relaxed); }
    size_t limit() const { return limit_; }

private:
    size_t limit_;
    std::atomic<size_t> held_{0};
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
    FileCache(std::string root, const CacheLimits& limits, const MimeTypes& types,
              DescriptorBudget& budget = DescriptorBudget::process());
    ~FileCache();
    FileCache(const FileCache&) = delete;
    FileCache& operator=(const FileCache&) = delete;

    // The entry for `key` (from normalize_path), looked up on disk when missing or stale.
    // `now_ms` is a monotonic clock. Never null. `trusted_until_ms`, if given, receives the
    // time from which the entry will be checked again (now_ms for one not kept).
    std::shared_ptr<const FileEntry> find(std::string_view key, uint64_t now_ms,
                                          uint64_t* trusted_until_ms = nullptr);

    // Closes the open files of entries not checked within the TTL (the next request reopens
    // them). On the cache's loop, about once a second.
    void sweep(uint64_t now_ms);

    const CacheCounters& counters() const { return counters_; }
    size_t size() const { return lru_.size(); }
    size_t open_files() const { return open_files_; }

private:
    struct Node {
        std::string key;
        std::shared_ptr<const FileEntry> entry;
        uint64_t checked_ms;
    };
    using List = std::list<Node>;

    std::shared_ptr<FileEntry> load(std::string_view key);
    bool unchanged(std::string_view key, const FileEntry& entry) const;
    int open_file(std::string_view key, int flags);  // open_beneath, shedding on EMFILE
    bool close_oldest_file();                        // false: this cache holds none
    static bool holds_file(const Node& n) { return n.entry->file != nullptr; }
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
    DescriptorBudget& budget_;
    size_t open_files_ = 0;  // entries holding a file open (each took one from budget_)
    CacheCounters counters_;
};

}  // namespace rivet::files
