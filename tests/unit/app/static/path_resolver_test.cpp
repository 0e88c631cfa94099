// Path mapping: every way a URL path might climb out of the root, lexically or by symlink.
#include "app/static/path_resolver.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>

#include "temp_dir.hpp"

namespace rivet::files {
namespace {

struct Case {
    const char* raw;
    int status;
    const char* key;
    bool directory;
};

TEST(NormalizePath, MapsOrRefusesEveryForm) {
    const Case cases[] = {
        {"", 0, "", true},
        {"a.txt", 0, "a.txt", false},
        {"css/site.css", 0, "css/site.css", false},
        {"dir/", 0, "dir", true},
        {"a//b", 0, "a/b", false},
        {"/etc/passwd", 0, "etc/passwd", false},  // "//etc/passwd": a second slash, still inside
        {"./a", 0, "a", false},
        {"a/./b", 0, "a/b", false},
        {"a/b/../c", 0, "a/c", false},
        {"a/..", 0, "", true},
        {"a/.", 0, "a", true},
        {"a/b/..", 0, "a", true},
        {"..", 400, "", false},
        {"../etc/passwd", 400, "", false},
        {"a/../../etc/passwd", 400, "", false},
        {"a/../..", 400, "", false},
        {"%2e%2e/etc/passwd", 400, "", false},  // decoded before the dots are resolved
        {"%2E%2E/etc/passwd", 400, "", false},
        {".%2e/x", 400, "", false},
        {"a/%2e%2e/%2e%2e/x", 400, "", false},
        {"%2e/a", 0, "a", false},
        {"..%2fetc%2fpasswd", 404, "", false},  // an encoded slash is refused outright
        {"a%2Fb", 404, "", false},
        {"..%5c..%5cetc", 0, "..\\..\\etc", false},  // a backslash is a name byte on Linux
        {"%252e%252e/x", 0, "%2e%2e/x", false},      // decoded once only
        {"a%00.txt", 400, "", false},
        {"a%00", 400, "", false},
        {"%c0%ae%c0%ae/x", 0, "\xc0\xae\xc0\xae/x", false},  // overlong UTF-8 is not a dot
        {"%", 400, "", false},
        {"%4", 400, "", false},
        {"%zz", 400, "", false},
        {"a%20b", 0, "a b", false},
        {"%41", 0, "A", false},
        {"...", 0, "...", false},
        {"a/.../b", 0, "a/.../b", false},
    };
    for (const auto& c : cases) {
        std::string key = "stale";
        NormalizedPath n = normalize_path(c.raw, key);
        EXPECT_EQ(n.status, c.status) << c.raw;
        if (c.status == 0) {
            EXPECT_EQ(key, c.key) << c.raw;
            EXPECT_EQ(n.directory, c.directory) << c.raw;
        }
    }
}

TEST(StatusForErrno, AsNginxAnswers) {
    EXPECT_EQ(status_for_errno(ENOENT), 404);
    EXPECT_EQ(status_for_errno(ENOTDIR), 404);
    EXPECT_EQ(status_for_errno(ENAMETOOLONG), 404);
    EXPECT_EQ(status_for_errno(EACCES), 403);
    EXPECT_EQ(status_for_errno(EXDEV), 403);
    EXPECT_EQ(status_for_errno(ELOOP), 403);
    EXPECT_EQ(status_for_errno(ENXIO), 403);  // a UNIX socket in the root
    EXPECT_EQ(status_for_errno(ENODEV), 403);
    EXPECT_EQ(status_for_errno(EIO), 500);
}

TEST(PathResolver, DotFilesAndDotDirectoriesAreHiddenButWellKnown) {
    for (const char* key :
         {".env", ".git/config", "a/.git/HEAD", "a/b/.htpasswd", ".well-known/.x", "..."})
        EXPECT_TRUE(names_hidden_file(key)) << key;
    for (const char* key : {"", "a.txt", "a/b.c/d", ".well-known/acme-challenge/t0k",
                            "a/.well-known/x", "x.", "a./b"})
        EXPECT_FALSE(names_hidden_file(key)) << key;
}

class OpenBeneath : public ::testing::TestWithParam<bool> {
protected:
    void SetUp() override {
        force_realpath_fallback(GetParam());
        outside_.write("secret.txt", "secret");
        root_.write("a.txt", "inside");
        root_.write("sub/b.txt", "deeper");
        root_.symlink("a.txt", "link-inside");
        root_.symlink("sub", "dir-link");
        root_.symlink(outside_ / "secret.txt", "abs-out");
        root_.symlink(
            "../" + std::filesystem::path(outside_.path()).filename().string() + "/secret.txt",
            "rel-out");
        root_.symlink(outside_.path(), "dir-out");
        root_.symlink("sub/../../", "climb");
    }
    void TearDown() override { force_realpath_fallback(false); }

    std::string read(const std::string& key, bool follow = false) {
        int fd = open_beneath(root_.path(), key, O_RDONLY, follow);
        if (fd < 0) return "errno " + std::to_string(-fd);
        char buf[64];
        ssize_t n = ::read(fd, buf, sizeof buf);
        ::close(fd);
        return std::string(buf, size_t(n < 0 ? 0 : n));
    }
    int status(const std::string& key) {
        int fd = open_beneath(root_.path(), key, O_RDONLY, false);
        if (fd >= 0) {
            ::close(fd);
            return 200;
        }
        return status_for_errno(-fd);
    }

    testing::TempDir outside_;  // a sibling of the root, holding what must never leak
    testing::TempDir root_;
};

TEST_P(OpenBeneath, OpensWhatIsInside) {
    EXPECT_EQ(read("a.txt"), "inside");
    EXPECT_EQ(read("sub/b.txt"), "deeper");
    EXPECT_EQ(read("link-inside"), "inside");     // a symlink that stays inside is fine
    EXPECT_EQ(read("dir-link/b.txt"), "deeper");  // through a directory symlink too
    EXPECT_EQ(status(""), 200);                   // the root itself
    EXPECT_EQ(status("missing"), 404);
    EXPECT_EQ(status("a.txt/x"), 404);
}

TEST_P(OpenBeneath, RefusesSymlinksLeavingTheRoot) {
    EXPECT_EQ(status("abs-out"), 403);
    EXPECT_EQ(status("rel-out"), 403);
    EXPECT_EQ(status("dir-out/secret.txt"), 403);
    EXPECT_EQ(status("climb"), 403);
    for (const char* key : {"abs-out", "rel-out", "dir-out/secret.txt"})
        EXPECT_EQ(read(key).find("secret"), std::string::npos) << key;
}

TEST_P(OpenBeneath, FollowsThemWhenAllowed) {
    EXPECT_EQ(read("abs-out", true), "secret");
    EXPECT_EQ(read("dir-out/secret.txt", true), "secret");
}

INSTANTIATE_TEST_SUITE_P(OpenAt2AndRealpath, OpenBeneath, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "realpath" : "openat2"; });

}  // namespace
}  // namespace rivet::files
