// The per-loop file cache: hits without system calls, LRU limits, TTL revalidation, and
// invalidation when a file changes, is replaced or vanishes.
#include "app/static/file_cache.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>

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
