#include "app/static/file_cache.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>

#include "app/static/path_resolver.hpp"
#include "http/response_writer.hpp"

namespace rivet::files {

namespace {

int64_t nanoseconds(const timespec& t) {
    return int64_t(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

void append_hex(std::string& out, uint64_t v) {
    char buf[16];
    auto r = std::to_chars(buf, buf + sizeof buf, v, 16);
    out.append(buf, size_t(r.ptr - buf));
}

// Reads the whole file; false when it changed size under us (the caller sends it by fd then).
bool read_all(int fd, uint64_t size, std::string& out) {
    out.resize(size);
    uint64_t done = 0;
    while (done < size) {
        ssize_t n = pread(fd, out.data() + done, size - done, off_t(done));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        done += uint64_t(n);
    }
    return true;
}

void fill_identity(FileEntry& e, const struct stat& st) {
    e.dev = uint64_t(st.st_dev);
    e.ino = uint64_t(st.st_ino);
    e.size = uint64_t(st.st_size);
    e.mtime_ns = nanoseconds(st.st_mtim);
    e.ctime_ns = nanoseconds(st.st_ctim);
}

bool out_of_descriptors(int negative_errno) {
    return negative_errno == -EMFILE || negative_errno == -ENFILE;
}

}  // namespace

DescriptorBudget& DescriptorBudget::process() {
    static DescriptorBudget budget([] {
        rlimit r{};
        if (getrlimit(RLIMIT_NOFILE, &r) != 0 || r.rlim_cur == RLIM_INFINITY) return size_t(256);
        // The rest is for connections, listeners, logs, and files being sent after their
        // entry was dropped.
        return std::max<size_t>(1, size_t(r.rlim_cur / 4));
    }());
    return budget;
}

FileCache::FileCache(std::string root, const CacheLimits& limits, const MimeTypes& types,
                     DescriptorBudget& budget)
    : root_(std::move(root)), limits_(limits), types_(types), budget_(budget) {
    if (limits_.entries < 1) limits_.entries = 1;
}

FileCache::~FileCache() {
    budget_.give_back(open_files_);
}

std::shared_ptr<const FileEntry> FileCache::find(std::string_view key, uint64_t now_ms,
                                                 uint64_t* trusted_until_ms) {
    uint64_t ignored = 0;
    uint64_t& until = trusted_until_ms ? *trusted_until_ms : ignored;
    auto hit = index_.find(key);
    if (hit != index_.end()) {
        auto it = hit->second;
        if (it != lru_.begin()) lru_.splice(lru_.begin(), lru_, it);
        if (now_ms - it->checked_ms < limits_.ttl_ms) {
            bump(counters_.hits);
            until = it->checked_ms + limits_.ttl_ms;
            return it->entry;
        }
        if (unchanged(key, *it->entry)) {
            it->checked_ms = now_ms;
            bump(counters_.revalidated);
            until = now_ms + limits_.ttl_ms;
            return it->entry;
        }
        bump(counters_.changed);
        erase(it);
    } else {
        bump(counters_.misses);
    }
    std::shared_ptr<const FileEntry> entry = load(key);
    until = now_ms;
    // A shortage of descriptors says nothing about the file: answered (503), never kept.
    if (entry->kind == FileEntry::Kind::Error && entry->status == 503) return entry;
    insert(key, entry, now_ms);
    until = now_ms + limits_.ttl_ms;
    return entry;
}

int FileCache::open_file(std::string_view key, int flags) {
    int fd = open_beneath(root_, key, flags, limits_.follow_symlinks);
    if (!out_of_descriptors(fd)) return fd;
    // Give back every descriptor this cache holds (those still being sent close when their
    // answer is done), then try once more.
    while (close_oldest_file()) {
    }
    return open_beneath(root_, key, flags, limits_.follow_symlinks);
}

bool FileCache::close_oldest_file() {
    for (auto it = lru_.end(); it != lru_.begin();) {
        --it;
        if (!holds_file(*it)) continue;
        bump(counters_.evictions);
        erase(it);
        return true;
    }
    return false;
}

void FileCache::sweep(uint64_t now_ms) {
    for (auto it = lru_.begin(); open_files_ > 0 && it != lru_.end();) {
        auto next = std::next(it);
        if (holds_file(*it) && now_ms - it->checked_ms >= limits_.ttl_ms) erase(it);
        it = next;
    }
}

std::shared_ptr<FileEntry> FileCache::load(std::string_view key) {
    auto e = std::make_shared<FileEntry>();
    int fd = open_file(key, O_RDONLY | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        e->status = status_for_errno(-fd);
        return e;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        e->status = status_for_errno(errno);
        ::close(fd);
        return e;
    }
    fill_identity(*e, st);
    if (S_ISDIR(st.st_mode)) {
        e->kind = FileEntry::Kind::Directory;
        ::close(fd);
        return e;
    }
    if (!S_ISREG(st.st_mode)) {  // devices, FIFOs, sockets: nothing a web server should read
        e->status = 403;
        ::close(fd);
        return e;
    }
    e->kind = FileEntry::Kind::File;
    e->mtime_s = int64_t(st.st_mtim.tv_sec);
    e->etag.reserve(40);
    e->etag.push_back('"');
    append_hex(e->etag, e->ino);
    e->etag.push_back('-');
    append_hex(e->etag, e->size);
    e->etag.push_back('-');
    append_hex(e->etag, uint64_t(e->mtime_ns));
    e->etag.push_back('"');
    char date[29];
    http::format_http_date(e->mtime_s, date);
    e->last_modified.assign(date, sizeof date);
    e->content_type = types_.lookup(key);
    if (std::string_view literal = interned_content_type(e->content_type); !literal.empty()) {
        e->content_type = literal;  // so that each response takes it as it is
        e->type_is_literal = true;
    }

    bool small =
        e->size < limits_.memory_below && e->size <= limits_.max_file && e->size <= limits_.bytes;
    if (small && read_all(fd, e->size, e->bytes)) {
        e->in_memory = true;
        ::close(fd);
    } else {
        e->bytes.clear();
        e->file = std::make_shared<const OpenFile>(fd);
    }
    return e;
}

// One open(O_PATH) and fstat: did the path come to name something else, or the same file
// change? O_PATH does not read the file, so this is cheap even for large ones.
bool FileCache::unchanged(std::string_view key, const FileEntry& entry) const {
    // Not open_file(): shedding could drop this very entry. No descriptor to look with: what
    // the cache knows still serves, until the next check.
    int fd = open_beneath(root_, key, O_PATH, limits_.follow_symlinks);
    if (out_of_descriptors(fd)) return entry.kind != FileEntry::Kind::Error;
    if (fd < 0)
        return entry.kind == FileEntry::Kind::Error && entry.status == status_for_errno(-fd);
    struct stat st;
    bool ok = fstat(fd, &st) == 0;
    ::close(fd);
    if (!ok || entry.kind == FileEntry::Kind::Error) return false;
    FileEntry now;
    fill_identity(now, st);
    bool dir = S_ISDIR(st.st_mode);
    if (dir != (entry.kind == FileEntry::Kind::Directory)) return false;
    return now.dev == entry.dev && now.ino == entry.ino && now.size == entry.size &&
           now.mtime_ns == entry.mtime_ns && now.ctime_ns == entry.ctime_ns;
}

void FileCache::insert(std::string_view key, std::shared_ptr<const FileEntry> entry,
                       uint64_t now_ms) {
    if (entry->file && !budget_.take()) {
        // The budget is spent: make room among this cache's open files, or, holding none,
        // serve this one without keeping it (its descriptor closes after the answer).
        bool room = false;
        while (!room && close_oldest_file()) room = budget_.take();
        if (!room) return;
    }
    uint64_t add = entry->in_memory ? entry->bytes.size() : 0;
    while (!lru_.empty() &&
           (lru_.size() >= limits_.entries || (add > 0 && bytes_ + add > limits_.bytes))) {
        bump(counters_.evictions);
        erase(std::prev(lru_.end()));
    }
    if (entry->file) ++open_files_;
    lru_.push_front(Node{std::string(key), std::move(entry), now_ms});
    index_.emplace(lru_.front().key, lru_.begin());
    bytes_ += add;
    bump(counters_.entries);
    counters_.bytes.store(bytes_, std::memory_order_relaxed);
}

void FileCache::erase(List::iterator it) {
    if (it->entry->in_memory) bytes_ -= it->entry->bytes.size();
    if (holds_file(*it)) {
        --open_files_;
        budget_.give_back();
    }
    index_.erase(std::string_view(it->key));
    lru_.erase(it);
    bump(counters_.entries, -1);
    counters_.bytes.store(bytes_, std::memory_order_relaxed);
}

}  // namespace rivet::files
