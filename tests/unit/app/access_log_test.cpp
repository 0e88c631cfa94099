#include "app/operations/access_log.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "app/operations/access_log_format.hpp"

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
