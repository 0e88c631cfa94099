#include "http/response_writer.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <ctime>
#include <span>
#include <string>
#include <vector>

using rivet::http::DateCache;
using rivet::http::Framing;
using rivet::http::ResponseHead;

namespace {

constexpr std::string_view kDate = "Date: X\r\nServer: rivet\r\n";

TEST(DateCache, FormatsImfFixdate) {
    char out[29];
    rivet::http::format_http_date(784111777, out);  // RFC 9110's example instant
    EXPECT_EQ(std::string_view(out, 29), "Sun, 06 Nov 1994 08:49:37 GMT");
    rivet::http::format_http_date(0, out);
    EXPECT_EQ(std::string_view(out, 29), "Thu, 01 Jan 1970 00:00:00 GMT");
    rivet::http::format_http_date(4102444799, out);
    EXPECT_EQ(std::string_view(out, 29), "Thu, 31 Dec 2099 23:59:59 GMT");
}

// A file's mtime can be any 64-bit time: one outside years 1 to 9999 is written as the nearest
// end. Before, year -35000 made a CR of its century digit ('0' - 35), and a time gmtime_r cannot
// convert left the fields unset; a Last-Modified is added to an answer without header()'s checks.
TEST(DateCache, TimesOutsideFourDigitYearsAreWrittenAsTheNearestEnd) {
    char out[29];
    for (int64_t t : {int64_t(-1120000000000000), int64_t(-62135596801), INT64_MIN}) {
        rivet::http::format_http_date(t, out);
        EXPECT_EQ(std::string_view(out, 29), "Mon, 01 Jan 0001 00:00:00 GMT") << t;
    }
    for (int64_t t : {int64_t(253402300800), int64_t(6900000000000000), INT64_MAX}) {
        rivet::http::format_http_date(t, out);
        EXPECT_EQ(std::string_view(out, 29), "Fri, 31 Dec 9999 23:59:59 GMT") << t;
    }
    rivet::http::format_http_date(-1, out);  // before 1970 is fine
    EXPECT_EQ(std::string_view(out, 29), "Wed, 31 Dec 1969 23:59:59 GMT");
    for (int64_t t = -62135596800; t < 253402300799; t += 86400 * 3659 + 12345) {
        rivet::http::format_http_date(t, out);
        EXPECT_FALSE(rivet::http::field_value_forbidden(std::string_view(out, 29))) << t;
    }
}

TEST(DateCache, ReformatsOnlyWhenTheSecondChanges) {
    DateCache cache;
    std::string a(cache.block(784111777));
    EXPECT_EQ(a, "Date: Sun, 06 Nov 1994 08:49:37 GMT\r\nServer: rivet\r\n");
    EXPECT_EQ(cache.block(784111777).data(), cache.block(784111777).data());
    EXPECT_EQ(std::string(cache.block(784111778)),
              "Date: Sun, 06 Nov 1994 08:49:38 GMT\r\nServer: rivet\r\n");
}

ResponseHead text(std::string_view body) {
    ResponseHead res;
    res.content_type = "text/plain; charset=utf-8";
    res.body = body;
    return res;
}

TEST(ResponseWriter, PlainResponse) {
    ResponseHead res = text("Hello, World!");
    std::string out;
    rivet::http::write_response(out, res, Framing{}, kDate);
    EXPECT_EQ(out,
              "HTTP/1.1 200 OK\r\nDate: X\r\nServer: rivet\r\n"
              "Content-Type: text/plain; charset=utf-8\r\nContent-Length: 13\r\n\r\n"
              "Hello, World!");
}

// The head is gathered in a 512-byte buffer and short bodies with it: heads and bodies on either
// side of those sizes, after bytes already in the output, come out whole and in order.
TEST(ResponseWriter, LongHeadsAndBodiesOfEverySizeComeOutInOrder) {
    std::vector<std::pair<std::string, std::string>> fields;
    for (int i = 0; i < 12; ++i)
        fields.emplace_back("X-Field-" + std::to_string(i), std::string(size_t(i) * 37, 'v'));
    fields.emplace_back("X-Long", std::string(700, 'w'));  // longer than the buffer alone
    for (size_t nfields : {size_t(0), size_t(3), size_t(12), fields.size()}) {
        for (size_t body_size : {0, 1, 127, 128, 129, 5000}) {
            const std::string body(body_size, 'b');
            ResponseHead res = text(body);
            std::string lines;
            for (size_t i = 0; i < nfields; ++i)
                lines += fields[i].first + ": " + fields[i].second + "\r\n";
            res.fields = {lines};
            std::string want =
                "earlier bytes|HTTP/1.1 200 OK\r\nDate: X\r\nServer: rivet\r\n"
                "Content-Type: text/plain; charset=utf-8\r\n";
            for (size_t i = 0; i < nfields; ++i)
                want += fields[i].first + ": " + fields[i].second + "\r\n";
            want += "Content-Length: " + std::to_string(body_size) + "\r\n\r\n" + body;
            std::string out = "earlier bytes|";
            rivet::http::write_response(out, res, Framing{}, kDate);
            EXPECT_EQ(out, want) << nfields << " fields, a body of " << body_size;
        }
    }
}

// Every offset at which the length's digits, the Connection field and the body can meet the
// end of the buffer: one field whose value grows a byte at a time, for each kind of framing.
TEST(ResponseWriter, EveryPieceMeetsTheBufferEndCorrectly) {
    const std::string body(100, 'b');
    for (const Framing framing :
         {Framing{}, Framing{true, true, 1}, Framing{false, false, 1}, Framing{false, true, 0}}) {
        for (size_t value = 0; value < 600; ++value) {
            std::vector<std::pair<std::string, std::string>> fields = {
                {"X-Pad", std::string(value, 'p')}};
            const std::string lines = "X-Pad: " + fields[0].second + "\r\n";
            ResponseHead res = text(body);
            res.fields = {lines};
            std::string want =
                "HTTP/1.1 200 OK\r\nDate: X\r\nServer: rivet\r\n"
                "Content-Type: text/plain; charset=utf-8\r\nX-Pad: " +
                fields[0].second + "\r\nContent-Length: 100\r\n";
            if (!framing.keep_alive)
                want += "Connection: close\r\n";
            else if (framing.version_minor == 0)
                want += "Connection: keep-alive\r\n";
            want += "\r\n";
            if (!framing.head_only) want += body;
            std::string out;
            rivet::http::write_response(out, res, framing, kDate);
            ASSERT_EQ(out, want) << "a value of " << value << ", head_only " << framing.head_only
                                 << ", keep_alive " << framing.keep_alive;
        }
    }
}

// Pieces are copied in overlapping steps of 4 to 32 bytes: a value and a body of every length up
// to past the widest step, made of bytes that differ from their neighbours, so that a byte
// copied from the wrong place shows.
TEST(ResponseWriter, PiecesOfEveryShortLengthKeepEveryByte) {
    std::string pattern;
    for (int i = 0; i < 200; ++i) pattern += static_cast<char>('!' + (i * 7) % 90);
    for (size_t n = 0; n <= 140; ++n) {
        const std::string piece = pattern.substr(n % 17, n);
        const std::string lines = "X-Piece: " + piece + "\r\n";
        ResponseHead res = text(piece);
        res.fields = {lines};
        const std::string want =
            "HTTP/1.1 200 OK\r\nDate: X\r\nServer: rivet\r\n"
            "Content-Type: text/plain; charset=utf-8\r\nX-Piece: " +
            piece + "\r\nContent-Length: " + std::to_string(n) + "\r\n\r\n" + piece;
        std::string out;
        rivet::http::write_response(out, res, Framing{}, kDate);
        ASSERT_EQ(out, want) << "pieces of " << n << " bytes";
    }
}

// A chunked answer whose Trailer field alone is longer than the buffer.
TEST(ResponseWriter, ALongTrailerListIsAnnouncedWhole) {
    std::vector<std::pair<std::string, std::string>> trailers;
    std::string names;
    for (int i = 0; i < 60; ++i) {
        trailers.emplace_back("x-checksum-" + std::to_string(i), "v");
        names += (i ? ", " : "") + trailers.back().first;
    }
    ResponseHead res = text("hello");
    res.trailers = &trailers;
    std::string out;
    rivet::http::write_response(out, res, Framing{}, kDate);
    std::string last = "0\r\n";
    for (auto& [name, value] : trailers) last += name + ": " + value + "\r\n";
    EXPECT_EQ(out,
              "HTTP/1.1 200 OK\r\nDate: X\r\nServer: rivet\r\n"
              "Content-Type: text/plain; charset=utf-8\r\nTransfer-Encoding: chunked\r\n"
              "Trailer: " +
                  names + "\r\n\r\n5\r\nhello\r\n" + last + "\r\n");
}

TEST(ResponseWriter, HeadKeepsLengthDropsBody) {
    ResponseHead res = text("Hello");
    std::string out;
    rivet::http::write_response(out, res, Framing{true, true, 1}, kDate);
    EXPECT_NE(out.find("Content-Length: 5\r\n"), std::string::npos);
    EXPECT_TRUE(out.ends_with("\r\n\r\n"));
}

TEST(ResponseWriter, ConnectionFieldFollowsTheRules) {
    ResponseHead res;
    res.status = 204;
    std::string close, keep10, keep11;
    rivet::http::write_response(close, res, Framing{false, false, 1}, kDate);
    rivet::http::write_response(keep10, res, Framing{false, true, 0}, kDate);
    rivet::http::write_response(keep11, res, Framing{false, true, 1}, kDate);
    EXPECT_NE(close.find("Connection: close\r\n"), std::string::npos);
    EXPECT_NE(keep10.find("Connection: keep-alive\r\n"), std::string::npos);
    EXPECT_EQ(keep11.find("Connection:"), std::string::npos);
    // 204 carries neither a body nor a Content-Length.
    EXPECT_EQ(keep11.find("Content-Length"), std::string::npos);
}

TEST(ResponseWriter, StreamedIsChunkedOn11) {
    ResponseHead res;
    res.content_type = "text/plain";
    res.body_kind = ResponseHead::Body::Streamed;
    std::string out11, out10;
    rivet::http::write_response(out11, res, Framing{}, kDate);
    rivet::http::write_response(out10, res, Framing{false, false, 0}, kDate);
    EXPECT_NE(out11.find("Transfer-Encoding: chunked\r\n"), std::string::npos);
    EXPECT_EQ(out10.find("Transfer-Encoding"), std::string::npos);
    EXPECT_EQ(out10.find("Content-Length"), std::string::npos);
    std::string chunks;
    rivet::http::append_chunk(chunks, "hello, world, 26 bytes....");
    rivet::http::append_chunk(chunks, "");
    rivet::http::append_last_chunk(chunks);
    EXPECT_EQ(chunks, "1a\r\nhello, world, 26 bytes....\r\n0\r\n\r\n");
}

TEST(ResponseWriter, SizedBodyHasItsLengthButNoBytes) {
    ResponseHead res;
    res.body_kind = ResponseHead::Body::Sized;
    res.content_length = 1234567;
    res.fields = {"ETag: \"x\"\r\n"};
    std::string out;
    rivet::http::write_response(out, res, Framing{}, kDate);
    EXPECT_EQ(out,
              "HTTP/1.1 200 OK\r\nDate: X\r\nServer: rivet\r\nETag: \"x\"\r\n"
              "Content-Length: 1234567\r\n\r\n");
}

TEST(ResponseWriter, OnlyFinalStatusesOtherThan204And304HaveABody) {
    EXPECT_FALSE(rivet::http::status_has_body(100));
    EXPECT_TRUE(rivet::http::status_has_body(200));
    EXPECT_FALSE(rivet::http::status_has_body(204));
    EXPECT_FALSE(rivet::http::status_has_body(304));
    EXPECT_TRUE(rivet::http::status_has_body(404));
}

TEST(ResponseWriter, SimpleResponseWithExtraFields) {
    std::string out;
    rivet::http::write_simple_response(out, 405, "Method Not Allowed\n", Framing{}, kDate,
                                       "Allow: GET, HEAD\r\n");
    EXPECT_TRUE(out.starts_with("HTTP/1.1 405 Method Not Allowed\r\n"));
    EXPECT_NE(out.find("Allow: GET, HEAD\r\n"), std::string::npos);
    EXPECT_TRUE(out.ends_with("\r\n\r\nMethod Not Allowed\n"));
}

}  // namespace
