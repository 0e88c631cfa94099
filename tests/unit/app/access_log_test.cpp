#include "app/operations/access_log.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <regex>
#include <sstream>

#include "app/operations/access_log_format.hpp"
#include "app/operations/error_log.hpp"

using namespace rivet::app;

namespace {

AccessRecord sample() {
    AccessRecord r;
    r.client = "10.0.0.1";
    r.method = "GET";
    r.target = "/a?b=1";
    r.referer = "http://x/";
    r.user_agent = "curl/8 \"quoted\"";
    r.status = 200;
    r.body_bytes = 13;
    r.micros = 42;
    return r;
}

std::string line(rivet::LogFormat f, const AccessRecord& r) {
    LogClock clock;
    clock.update(0);
    std::string out;
    format_access_line(f, r, clock, out);
    return out;
}

std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

}  // namespace

TEST(AccessLogFormat, CombinedCommonJson) {
    EXPECT_EQ(line(rivet::LogFormat::Combined, sample()),
              "10.0.0.1 - - [01/Jan/1970:00:00:00 +0000] \"GET /a?b=1 HTTP/1.1\" 200 13 "
              "\"http://x/\" \"curl/8 \\x22quoted\\x22\"\n");
    EXPECT_EQ(line(rivet::LogFormat::Common, sample()),
              "10.0.0.1 - - [01/Jan/1970:00:00:00 +0000] \"GET /a?b=1 HTTP/1.1\" 200 13\n");
    EXPECT_EQ(line(rivet::LogFormat::Json, sample()),
              "{\"time\":\"1970-01-01T00:00:00Z\",\"remote_addr\":\"10.0.0.1\",\"request\":\"GET "
              "/a?b=1 HTTP/1.1\",\"method\":\"GET\",\"uri\":\"/a?b=1\",\"status\":200,"
              "\"body_bytes_sent\":13,\"request_time_us\":42,\"referer\":\"http://x/\","
              "\"user_agent\":\"curl/8 \\\"quoted\\\"\"}\n");
}

TEST(AccessLogFormat, TheProtocolIsNginxs) {
    AccessRecord r = sample();
    r.version_minor = 0;
    EXPECT_NE(line(rivet::LogFormat::Combined, r).find("\"GET /a?b=1 HTTP/1.0\" 200"),
              std::string::npos);
    r.version_major = 2;  // an HTTP/2 stream: minor 0, written as nginx writes it
    for (auto f : {rivet::LogFormat::Combined, rivet::LogFormat::Common})
        EXPECT_NE(line(f, r).find("] \"GET /a?b=1 HTTP/2.0\" 200 13"), std::string::npos)
            << line(f, r);
    EXPECT_NE(line(rivet::LogFormat::Json, r).find(",\"request\":\"GET /a?b=1 HTTP/2.0\","),
              std::string::npos)
        << line(rivet::LogFormat::Json, r);
}

TEST(AccessLogFormat, HostileBytesStayOnOneLine) {
    AccessRecord r = sample();
    r.target = "/\n\x01\xff\\";
    r.referer = "";
    std::string l = line(rivet::LogFormat::Combined, r);
    EXPECT_NE(l.find("\"GET /\\x0A\\x01\\xFF\\x5C HTTP/1.1\""), std::string::npos) << l;
    EXPECT_NE(l.find(" \"-\" "), std::string::npos);
    std::string j = line(rivet::LogFormat::Json, r);
    EXPECT_NE(j.find("/\\u000A\\u0001\\u00FF\\\\"), std::string::npos) << j;
    AccessRecord bad;
    bad.client = "1.2.3.4";
    bad.status = 400;
    EXPECT_NE(line(rivet::LogFormat::Combined, bad).find("] \"-\" 400 0 \"-\" \"-\""),
              std::string::npos);
}

TEST(AccessLog, ShardsReachTheFileAtFlushAndStop) {
    char path[] = "/tmp/rivet_access_XXXXXX";
    int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    close(fd);
    {
        AccessLog log(3);
        rivet::LogOptions o;
        o.access_log = path;
        ASSERT_EQ(log.configure(o), "");
        for (int i = 0; i < 1000; ++i) log.write(unsigned(i % 3), sample(), IpAddress());
        log.flush();
        std::string text = slurp(path);
        EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1000);
        for (int i = 0; i < 10; ++i) log.write(0, sample(), IpAddress());
        log.stop();
        text = slurp(path);
        EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1010);
    }
    unlink(path);
}

// A full disk (/dev/full: every write fails with ENOSPC) loses lines: each one is counted, the
// error log says so once when it starts, and once when writing resumes (issue 26, item 12).
TEST(AccessLog, AFullDiskCountsEveryLostLineAndSaysWhenWritingResumes) {
    char errors[] = "/tmp/rivet_errors_XXXXXX";
    char good[] = "/tmp/rivet_access_XXXXXX";
    for (char* path : {errors, good}) {
        int fd = mkstemp(path);
        ASSERT_GE(fd, 0);
        close(fd);
    }
    ASSERT_EQ(ErrorLog::instance().open(errors), "");
    {
        AccessLog log(2);
        rivet::LogOptions o;
        o.access_log = "/dev/full";
        ASSERT_EQ(log.configure(o), "");
        for (int batch = 1; batch <= 3; ++batch) {  // three failed writes, one outage
            for (int i = 0; i < 5; ++i) log.write(unsigned(i % 2), sample(), IpAddress());
            log.flush();
            EXPECT_EQ(log.dropped(), uint64_t(5 * batch));
        }
        o.access_log = good;  // the operator points it elsewhere (or frees the disk)
        ASSERT_EQ(log.configure(o), "");
        log.write(0, sample(), IpAddress());
        log.flush();
        EXPECT_EQ(log.dropped(), 15u);
        std::string text = slurp(good);
        EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1);
        o.access_log = "/dev/full";  // a second outage is reported again
        ASSERT_EQ(log.configure(o), "");
        log.write(0, sample(), IpAddress());
        log.flush();
        EXPECT_EQ(log.dropped(), 16u);
    }
    ErrorLog::instance().open("stderr");
    std::string said = slurp(errors);
    const std::string failing = "access log: cannot write to /dev/full: No space left on device";
    size_t first = said.find(failing);
    ASSERT_NE(first, std::string::npos) << said;
    size_t resumed =
        said.find("access log: writing to " + std::string(good) + " again; 15 lines were lost");
    ASSERT_NE(resumed, std::string::npos) << said;
    EXPECT_LT(first, resumed);
    // Once per outage: not again in the first one, again in the second.
    size_t second = said.find(failing, first + 1);
    EXPECT_GT(second, resumed) << said;
    EXPECT_NE(second, std::string::npos) << said;
    unlink(errors);
    unlink(good);
}

TEST(WriteOutage, OneLineWhenWritesStartFailingAndOneWhenTheyResume) {
    WriteOutage outage;
    EXPECT_EQ(outage.after_write("x.log", 0, 0), "");
    EXPECT_EQ(outage.after_write("x.log", ENOSPC, 3),
              "cannot write to x.log: No space left on device; lines are lost until writing "
              "resumes");
    EXPECT_EQ(outage.after_write("x.log", ENOSPC, 7), "");
    EXPECT_EQ(outage.after_write("x.log", EIO, 9), "");
    EXPECT_EQ(outage.after_write("x.log", 0, 9), "writing to x.log again; 6 lines were lost");
    EXPECT_EQ(outage.after_write("x.log", 0, 9), "");
}

namespace {

AccessRecord over_tls(bool resumed) {
    AccessRecord r = sample();
    r.user_agent = "";
    r.secure = true;
    r.tls_resumed = resumed;
    r.tls_version = "TLSv1.3";
    r.tls_cipher = "TLS_AES_128_GCM_SHA256";
    r.tls_server_name = "a.example\"\x01";  // the client's bytes
    return r;
}

}  // namespace

TEST(TlsAccessLog, JsonLinesCarryNginxsSslFields) {
    std::string j = line(rivet::LogFormat::Json, over_tls(false));
    EXPECT_NE(j.find("\"user_agent\":\"\",\"ssl_protocol\":\"TLSv1.3\",\"ssl_cipher\":\"TLS_AES_"
                     "128_GCM_SHA256\",\"ssl_server_name\":\"a.example\\\"\\u0001\","
                     "\"ssl_session_reused\":\".\"}\n"),
              std::string::npos)
        << j;
    EXPECT_NE(line(rivet::LogFormat::Json, over_tls(true)).find("\"ssl_session_reused\":\"r\"}\n"),
              std::string::npos);
}

TEST(TlsAccessLog, PlainLinesAndTextFormatsHaveNone) {
    AccessRecord plain = over_tls(false);
    plain.secure = false;
    EXPECT_EQ(line(rivet::LogFormat::Json, plain).find("ssl_"), std::string::npos);
    // combined and common stay nginx's formats, which tools parse by position
    EXPECT_EQ(line(rivet::LogFormat::Combined, over_tls(true)),
              line(rivet::LogFormat::Combined, plain));
    EXPECT_EQ(line(rivet::LogFormat::Common, over_tls(true)),
              line(rivet::LogFormat::Common, plain));
}
