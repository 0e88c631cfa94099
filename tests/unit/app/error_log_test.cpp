// The error log quotes a failed request within bounds: the path and an exception's message may
// be the client's text (an exception may quote a token of the body), as long as the client made
// it, and twenty requests must not make a log of megabytes.
#include <rivet/rivet.hpp>

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "core/bounded_text.hpp"
#include "raw_client.hpp"

namespace {

std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

TEST(ErrorLog, AFailedHandlerIsLoggedWithItsPathAndMessageCut) {
    char path[] = "/tmp/rivet_error_log_XXXXXX";
    int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    close(fd);
    rivet::App app;
    app.get("/throws/*rest", [](rivet::Request& req, rivet::Response&) -> void {
        throw std::runtime_error("bad token: " + std::string(req.param("rest")) +
                                 std::string(100'000, '9'));
    });
    rivet::RunOptions options = rivet::test::local_server();
    options.ops.log.error_log = path;
    uint16_t port = app.start(options);
    const std::string long_path = "/throws/" + std::string(5'000, 'p');
    auto got = rivet::test::exchange(port, "GET " + long_path + " HTTP/1.1\r\nHost: x\r\n\r\n");
    EXPECT_TRUE(got.starts_with("HTTP/1.1 500 ")) << got.substr(0, 200);
    app.stop();
    std::string log = slurp(path);
    unlink(path);
    const size_t at = log.find("handler for /throws/ppp");
    ASSERT_NE(at, std::string::npos) << log.substr(0, 500);
    const std::string line = log.substr(at, log.find('\n', at) - at);
    EXPECT_LT(line.size(), 2'200u);  // 1 KiB of path, 1 KiB of message, the words around them
    // 5,008 bytes of path and 105,011 of message, each cut to its first 1,024.
    EXPECT_NE(line.find("ppp... (3984 more bytes) threw: bad token: ppp"), std::string::npos)
        << line.substr(0, 200);
    EXPECT_TRUE(line.ends_with("ppp... (103987 more bytes)")) << line.substr(line.size() - 100);
}

TEST(BoundedText, CutsNeverInsideAUtf8SequenceAndSaysHowMuchIsLeftOut) {
    using rivet::core::bounded_text;
    EXPECT_EQ(bounded_text("abc", 3), "abc");
    EXPECT_EQ(bounded_text("abcd", 3), "abc... (1 more bytes)");
    EXPECT_EQ(bounded_text("ab\xC3\xA9z", 3), "ab... (3 more bytes)");       // not half of the é
    EXPECT_EQ(bounded_text("a\xF0\x9F\x98\x80", 4), "a... (4 more bytes)");  // nor of 😀
}

}  // namespace
