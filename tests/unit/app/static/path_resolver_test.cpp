// Path mapping: every way a URL path might climb out of the root, lexically or by symlink.
#include "app/static/path_resolver.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

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

// A reading of the rules above, one segment at a time: each is percent-decoded (a bad escape
// or NUL is 400, an encoded slash 404), then "." and "" are dropped and ".." takes the segment
// before it away (400 above the root). normalize_path takes a path with nothing to decode and
// no dot or empty segment whole; this checks that both of its ways agree with the rules.
NormalizedPath by_segments(std::string_view raw, std::string& key) {
    std::vector<std::string> kept;
    std::string last;
    for (size_t start = 0;;) {
        size_t end = raw.find('/', start);
        if (end == std::string_view::npos) end = raw.size();
        std::string seg;
        for (size_t i = start; i < end; ++i) {
            char c = raw[i];
            if (c == '%') {
                auto hex = [](char h) {
                    const char* digits = "0123456789abcdef";
                    const char* at = h == '\0' ? nullptr : std::strchr(digits, std::tolower(h));
                    return at ? int(at - digits) : -1;
                };
                const int hi = i + 2 < raw.size() ? hex(raw[i + 1]) : -1;
                const int lo = hi >= 0 ? hex(raw[i + 2]) : -1;
                if (lo < 0) return {400, false};
                c = char(hi * 16 + lo);
                i += 2;
                if (c == '/') return {404, false};
            }
            if (c == '\0') return {400, false};
            seg.push_back(c);
        }
        if (seg == "..") {
            if (kept.empty()) return {400, false};
            kept.pop_back();
        } else if (!seg.empty() && seg != ".") {
            kept.push_back(seg);
        }
        last = seg;
        if (end == raw.size()) break;
        start = end + 1;
    }
    key.clear();
    for (const auto& seg : kept) key += (key.empty() ? "" : "/") + seg;
    return {0, raw.empty() || raw.back() == '/' || last == "." || last == ".."};
}

TEST(NormalizePath, AgreesWithTheRulesOnEveryShortPath) {
    // Every path of up to six bytes from these: names, dots, slashes, escapes (of '.', '/',
    // 0xef, 0xfe...), broken escapes, and NUL.
    constexpr char kBytes[] = {'a', '.', '/', '%', '2', 'e', 'f', '\0'};
    size_t checked = 0, taken = 0;
    std::string raw;
    std::function<void()> each = [&] {
        std::string key = "stale", want;
        const NormalizedPath n = normalize_path(raw, key);
        const NormalizedPath r = by_segments(raw, want);
        ASSERT_EQ(n.status, r.status) << ::testing::PrintToString(raw);
        if (r.status == 0) {
            ASSERT_EQ(key, want) << ::testing::PrintToString(raw);
            ASSERT_EQ(n.directory, r.directory) << ::testing::PrintToString(raw);
            ++taken;
        }
        ++checked;
        if (raw.size() == 6) return;
        for (char b : kBytes) {
            raw.push_back(b);
            each();
            raw.pop_back();
        }
    };
    each();
    EXPECT_EQ(checked, (std::pow(8, 7) - 1) / 7);  // 1 + 8 + ... + 8^6
    EXPECT_GT(taken, checked / 10);                // many are usable, not all refused
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
