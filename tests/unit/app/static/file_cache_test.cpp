// The per-loop file cache: hits without system calls, LRU limits, TTL revalidation, and
// invalidation when a file changes, is replaced or vanishes.
#include "app/static/file_cache.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "temp_dir.hpp"

namespace rivet::files {
namespace {

using Kind = FileEntry::Kind;

class FileCacheTest : public ::testing::Test {
protected:
    FileCache make(CacheLimits limits = {}) { return FileCache(dir_.path(), limits, types_); }

    testing::TempDir dir_;
    MimeTypes types_;
};

TEST_F(FileCacheTest, LoadsFilesDirectoriesAndErrors) {
    dir_.write("small.txt", "hello");
    dir_.write("big.bin", std::string(100 * 1024, 'x'));
    dir_.mkdir("sub");
    FileCache cache = make();
    auto small = cache.find("small.txt", 0);
    ASSERT_EQ(small->kind, Kind::File);
    EXPECT_TRUE(small->in_memory);
    EXPECT_EQ(small->bytes, "hello");
    EXPECT_EQ(small->size, 5u);
    EXPECT_EQ(small->content_type, "text/plain; charset=utf-8");
    EXPECT_EQ(small->etag.front(), '"');
    EXPECT_EQ(small->etag.back(), '"');
    EXPECT_EQ(small->last_modified.size(), 29u);

    auto big = cache.find("big.bin", 0);  // at or above memory_below (64 KiB): an open fd
    ASSERT_EQ(big->kind, Kind::File);
    EXPECT_FALSE(big->in_memory);
    ASSERT_TRUE(big->file);
    EXPECT_GE(big->file->fd(), 0);

    EXPECT_EQ(cache.find("sub", 0)->kind, Kind::Directory);
    auto missing = cache.find("nope", 0);
    EXPECT_EQ(missing->kind, Kind::Error);
    EXPECT_EQ(missing->status, 404);
    EXPECT_NE(small->etag, big->etag);
}

TEST_F(FileCacheTest, HitsWithinTheTtlAndCountsThem) {
    dir_.write("a.txt", "one");
    FileCache cache = make({.ttl_ms = 1000});
    auto first = cache.find("a.txt", 10);
    auto second = cache.find("a.txt", 500);
    EXPECT_EQ(first.get(), second.get());
    cache.find("missing", 500);
    cache.find("missing", 600);  // "not found" is cached too
    const auto& c = cache.counters();
    EXPECT_EQ(c.misses.load(), 2u);
    EXPECT_EQ(c.hits.load(), 2u);
    EXPECT_EQ(c.entries.load(), 2u);
    EXPECT_EQ(c.bytes.load(), 3u);
}

TEST_F(FileCacheTest, ServesTheOldBytesUntilTheTtlThenTheNew) {
    dir_.write("a.txt", "old");
    FileCache cache = make({.ttl_ms = 1000});
    EXPECT_EQ(cache.find("a.txt", 0)->bytes, "old");
    dir_.write("a.txt", "newer");  // in place: same inode, new size and mtime
    EXPECT_EQ(cache.find("a.txt", 999)->bytes, "old");
    EXPECT_EQ(cache.find("a.txt", 1000)->bytes, "newer");
    EXPECT_EQ(cache.counters().changed.load(), 1u);
}

TEST_F(FileCacheTest, SameSizeChangeIsSeenThroughTheMtime) {
    dir_.write("a.txt", "aaaa");
    dir_.touch("a.txt", 1'000'000);
    FileCache cache = make({.ttl_ms = 0});  // check on every lookup
    auto before = cache.find("a.txt", 0);
    EXPECT_EQ(cache.find("a.txt", 1)->bytes, "aaaa");
    EXPECT_EQ(cache.counters().revalidated.load(), 1u);
    dir_.write("a.txt", "bbbb");
    dir_.touch("a.txt", 2'000'000);
    auto after = cache.find("a.txt", 2);
    EXPECT_EQ(after->bytes, "bbbb");
    EXPECT_NE(after->etag, before->etag);
    EXPECT_EQ(before->bytes, "aaaa");  // a response holding the old entry keeps its bytes
}

TEST_F(FileCacheTest, ReplacedByRenameAndDeleted) {
    dir_.write("a.txt", "first");
    FileCache cache = make({.ttl_ms = 100});
    auto first = cache.find("a.txt", 0);
    dir_.write("a.tmp", "second");
    std::rename((dir_ / "a.tmp").c_str(), (dir_ / "a.txt").c_str());  // a new inode
    EXPECT_EQ(cache.find("a.txt", 100)->bytes, "second");
    std::remove((dir_ / "a.txt").c_str());
    EXPECT_EQ(cache.find("a.txt", 150)->kind, Kind::File);  // trusted within the TTL
    auto gone = cache.find("a.txt", 200);
    EXPECT_EQ(gone->kind, Kind::Error);
    EXPECT_EQ(gone->status, 404);
    dir_.write("a.txt", "back");  // and a new file shows up after the TTL as well
    EXPECT_EQ(cache.find("a.txt", 300)->bytes, "back");
}

TEST_F(FileCacheTest, OpenFileOutlivesDeletion) {
    dir_.write("big.bin", std::string(200 * 1024, 'y'));
    FileCache cache = make({.ttl_ms = 0});
    auto big = cache.find("big.bin", 0);
    std::remove((dir_ / "big.bin").c_str());
    EXPECT_EQ(cache.find("big.bin", 1)->status, 404);
    char c = 0;  // the entry a response holds still reads the unlinked file
    EXPECT_EQ(pread(big->file->fd(), &c, 1, 1000), 1);
    EXPECT_EQ(c, 'y');
}

TEST_F(FileCacheTest, LruEvictsTheLeastRecentlyUsedEntry) {
    for (const char* name : {"a", "b", "c", "d"}) dir_.write(name, name);
    FileCache cache = make({.entries = 3});
    auto a = cache.find("a", 0);
    cache.find("b", 0);
    cache.find("c", 0);
    EXPECT_EQ(cache.find("a", 1).get(), a.get());  // a is now the most recent; b the least
    cache.find("d", 2);                            // evicts b
    EXPECT_EQ(cache.size(), 3u);
    EXPECT_EQ(cache.counters().evictions.load(), 1u);
    uint64_t misses = cache.counters().misses.load();
    cache.find("a", 3);
    cache.find("c", 3);
    EXPECT_EQ(cache.counters().misses.load(), misses);
    cache.find("b", 3);
    EXPECT_EQ(cache.counters().misses.load(), misses + 1);
}

TEST_F(FileCacheTest, ByteBudgetAndMaxFileSize) {
    dir_.write("one", std::string(600, '1'));
    dir_.write("two", std::string(600, '2'));
    dir_.write("huge", std::string(5000, 'h'));
    FileCache cache = make({.bytes = 1000, .max_file = 4096});
    cache.find("one", 0);
    cache.find("two", 0);  // 1200 > 1000: "one" goes
    EXPECT_EQ(cache.counters().bytes.load(), 600u);
    EXPECT_EQ(cache.counters().evictions.load(), 1u);
    auto huge = cache.find("huge", 0);  // above max_file: by descriptor, costs no bytes
    EXPECT_FALSE(huge->in_memory);
    EXPECT_TRUE(huge->file);
    EXPECT_EQ(cache.counters().bytes.load(), 600u);
}

TEST_F(FileCacheTest, SpecialFilesAreForbidden) {
    ASSERT_EQ(mkfifo((dir_ / "fifo").c_str(), 0600), 0);
    FileCache cache = make();
    auto e = cache.find("fifo", 0);  // opened without blocking, then refused
    EXPECT_EQ(e->kind, Kind::Error);
    EXPECT_EQ(e->status, 403);
}

TEST_F(FileCacheTest, SymlinkOutOfTheRootIsForbidden) {
    testing::TempDir outside;
    outside.write("secret", "secret");
    dir_.symlink(outside / "secret", "leak");
    EXPECT_EQ(make().find("leak", 0)->status, 403);
    auto followed = make({.follow_symlinks = true}).find("leak", 0);
    EXPECT_EQ(followed->bytes, "secret");
}

}  // namespace
}  // namespace rivet::files

// ---- descriptors ----

namespace rivet::files::descriptors {

using Kind = FileEntry::Kind;

class Budgeted : public ::testing::Test {
protected:
    Budgeted() {
        for (int i = 0; i < 6; ++i) dir_.write("big" + std::to_string(i), std::string(70'000, 'b'));
        dir_.write("small", "s");
    }
    std::unique_ptr<FileCache> make(DescriptorBudget& budget, uint64_t ttl_ms = 1000) {
        return std::make_unique<FileCache>(dir_.path(), CacheLimits{.ttl_ms = ttl_ms}, types_,
                                           budget);
    }
    testing::TempDir dir_;
    MimeTypes types_;
};

TEST_F(Budgeted, CachesShareOneBudgetAndMakeRoomFromTheirOwn) {
    DescriptorBudget budget(3);
    auto a = make(budget), b = make(budget), c = make(budget);
    a->find("big0", 0);
    a->find("big1", 0);
    b->find("big2", 0);
    EXPECT_EQ(budget.held(), 3u);
    auto e = b->find("big3", 0);  // b closes its own oldest (big2) to keep big3
    ASSERT_EQ(e->kind, FileEntry::Kind::File);
    EXPECT_EQ(b->open_files(), 1u);
    EXPECT_EQ(a->open_files(), 2u);
    EXPECT_EQ(budget.held(), 3u);
    // c holds nothing to close: the file is served, not kept, and found again on disk.
    auto unkept = c->find("big4", 0);
    ASSERT_EQ(unkept->kind, FileEntry::Kind::File);
    ASSERT_TRUE(unkept->file);
    EXPECT_EQ(c->open_files(), 0u);
    EXPECT_EQ(c->size(), 0u);
    c->find("big4", 1);
    EXPECT_EQ(c->counters().read().misses, 2u);
    // Files held in memory take no descriptor.
    EXPECT_TRUE(c->find("small", 0)->in_memory);
    EXPECT_EQ(c->size(), 1u);
    a.reset();  // a cache going away gives its descriptors back
    EXPECT_EQ(budget.held(), 1u);
}

TEST_F(Budgeted, SweepClosesFilesPastTheirTtl) {
    DescriptorBudget budget(10);
    auto cache = make(budget, 100);
    cache->find("big0", 0);
    cache->find("small", 0);
    cache->find("big1", 60);
    cache->sweep(99);
    EXPECT_EQ(cache->open_files(), 2u);
    cache->sweep(100);  // big0 was checked 100 ms ago; big1 60 ms later
    EXPECT_EQ(cache->open_files(), 1u);
    EXPECT_EQ(budget.held(), 1u);
    cache->sweep(160);
    EXPECT_EQ(cache->open_files(), 0u);
    EXPECT_EQ(cache->size(), 1u);  // the small file's bytes stay: no descriptor
}

// The process's descriptor limit lowered to just above the highest open descriptor, and every
// hole below it filled: every open() fails with EMFILE until something is closed.
class NoDescriptorsLeft {
public:
    NoDescriptorsLeft() {
        getrlimit(RLIMIT_NOFILE, &saved_);
        int highest = 0;
        for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd"))
            highest = std::max(highest, std::stoi(e.path().filename().string()));
        rlimit r = saved_;
        r.rlim_cur = rlim_t(highest + 1);
        setrlimit(RLIMIT_NOFILE, &r);
        for (int fd; (fd = dup(0)) >= 0;) fillers_.push_back(fd);
    }
    ~NoDescriptorsLeft() {
        for (int fd : fillers_) ::close(fd);
        setrlimit(RLIMIT_NOFILE, &saved_);
    }

private:
    rlimit saved_{};
    std::vector<int> fillers_;
};

TEST_F(Budgeted, OutOfDescriptorsTheCacheGivesItsOwnBackThenAnswers503Uncached) {
    DescriptorBudget budget(10);
    auto cache = make(budget, 0);  // TTL 0: every lookup checks the file again
    cache->find("big0", 0);
    cache->find("big1", 0);
    {
        NoDescriptorsLeft full;
        // Its two descriptors are closed, and the new file opens in their place.
        auto e = cache->find("big2", 1);
        ASSERT_EQ(e->kind, FileEntry::Kind::File) << e->status;
        EXPECT_EQ(cache->open_files(), 1u);
        // A cached file that cannot be checked (no descriptor for the stat) is still served.
        int hole = dup(0);  // takes the last free descriptor below the limit
        EXPECT_EQ(cache->find("big2", 2).get(), e.get());
        // The cache gives big2's descriptor back, but e still holds it: nothing opens now.
        auto refused = cache->find("small", 3);
        EXPECT_EQ(refused->kind, FileEntry::Kind::Error);
        EXPECT_EQ(refused->status, 503);
        EXPECT_EQ(cache->open_files(), 0u);
        EXPECT_EQ(cache->size(), 0u);  // a shortage is not remembered
        ::close(hole);
    }
    EXPECT_TRUE(cache->find("small", 4)->in_memory);
    EXPECT_EQ(budget.held(), 0u);
}

}  // namespace rivet::files::descriptors
