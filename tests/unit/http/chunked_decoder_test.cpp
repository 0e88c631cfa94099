// Unit tests of the chunked body decoder: sizes, extensions, trailers, errors, limits, every
// split of the input, and exact consumption before pipelined data.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "http/chunked_decoder.hpp"

using namespace std::string_literals;
using rivet::http::ChunkedDecoder;
using Result = ChunkedDecoder::Result;

namespace {

struct Outcome {
    Result::Kind kind = Result::NeedMore;
    size_t consumed = 0;  // total over all feeds; on Error, the absolute offset refused
    int status = 0;
    std::string body;
};

// Feeds `in` in pieces that end at the given cut points.
Outcome decode(std::string_view in, const std::vector<size_t>& cuts, uint64_t max_body = 1 << 20,
               size_t max_trailer = 1024) {
    ChunkedDecoder d(max_body, max_trailer);
    Outcome o;
    size_t pos = 0;
    std::vector<size_t> ends = cuts;
    ends.push_back(in.size());
    for (const size_t end : ends) {
        if (end < pos) continue;
        const Result r = d.feed(in.substr(pos, end - pos), o.body);
        o.kind = r.kind;
        if (r.kind == Result::Error) {
            o.consumed = pos + r.consumed;
            o.status = r.status;
            return o;
        }
        if (r.kind == Result::NeedMore) {
            EXPECT_EQ(r.consumed, end - pos);
        }
        pos += r.consumed;
        if (r.kind == Result::Done) break;
    }
    o.consumed = pos;
    return o;
}

Outcome decode(std::string_view in, uint64_t max_body = 1 << 20, size_t max_trailer = 1024) {
    return decode(in, {}, max_body, max_trailer);
}

// Whole, split in two at every point, and byte by byte: all must agree.
Outcome decode_every_way(std::string_view in, uint64_t max_body = 1 << 20,
                         size_t max_trailer = 1024) {
    const Outcome whole = decode(in, max_body, max_trailer);
    auto same = [&](const Outcome& o, const std::string& how) {
        EXPECT_EQ(o.kind, whole.kind) << how;
        EXPECT_EQ(o.status, whole.status) << how;
        EXPECT_EQ(o.consumed, whole.consumed) << how;
        if (whole.kind != Result::Error) {
            EXPECT_EQ(o.body, whole.body) << how;
        }
    };
    for (size_t k = 0; k <= in.size(); ++k)
        same(decode(in, {k}, max_body, max_trailer), "split at " + std::to_string(k));
    std::vector<size_t> bytes;
    for (size_t k = 1; k < in.size(); ++k) bytes.push_back(k);
    same(decode(in, bytes, max_body, max_trailer), "byte by byte");
    return whole;
}

void expect_body(std::string_view in, std::string_view body) {
    const Outcome o = decode_every_way(in);
    EXPECT_EQ(o.kind, Result::Done) << testing::PrintToString(std::string(in));
    EXPECT_EQ(o.body, body);
    EXPECT_EQ(o.consumed, in.size());
}

void expect_error(std::string_view in, int status, size_t at) {
    const Outcome o = decode_every_way(in);
    EXPECT_EQ(o.kind, Result::Error) << testing::PrintToString(std::string(in));
    EXPECT_EQ(o.status, status) << testing::PrintToString(std::string(in));
    EXPECT_EQ(o.consumed, at) << "error offset for " << testing::PrintToString(std::string(in));
}

TEST(ChunkedDecoder, DecodesSizes) {
    expect_body("5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n", "hello world");
    expect_body("0\r\n\r\n", "");
    expect_body("a\r\n0123456789\r\n0\r\n\r\n", "0123456789");
    expect_body("A\r\n0123456789\r\n000\r\n\r\n", "0123456789");
    expect_body("00000000000000000001\r\nx\r\n0\r\n\r\n", "x");  // leading zeros: no overflow
    expect_body("10\r\n" + std::string(16, 'q') + "\r\n0\r\n\r\n", std::string(16, 'q'));
    expect_body("1\r\n\r\r\n1\r\n\n\r\n0\r\n\r\n", "\r\n");  // payload bytes are opaque
    std::string many, body;
    for (int i = 1; i <= 40; ++i) {
        char size[8];
        std::snprintf(size, sizeof size, "%x", i);
        many += std::string(size) + "\r\n" + std::string(i, char('a' + i % 26)) + "\r\n";
        body += std::string(i, char('a' + i % 26));
    }
    expect_body(many + "0\r\n\r\n", body);
}

TEST(ChunkedDecoder, ParsesAndIgnoresExtensions) {
    for (const char* ext : {";a", ";a=b", ";a;b;c", ";a=\"quoted\"", ";a=\"q; \\\"x\\\\\" ;b",
                            "; a", ";\ta", ";a = b", ";a=\tb", ";a ;b", ";a=b ;c", ";a=\"\"",
                            ";a=\"\xc3\xa9\"", ";!#$%&'*+-.^_`|~"}) {
        std::string in = "3";
        in.append(ext).append("\r\nabc\r\n0").append(ext).append("\r\n\r\n");
        expect_body(in, "abc");
    }
}

TEST(ChunkedDecoder, RefusesMalformedExtensions) {
    expect_error("3;\r\nabc\r\n0\r\n\r\n", 400, 2);             // empty
    expect_error("3;=v\r\nabc\r\n0\r\n\r\n", 400, 2);           // no name
    expect_error("3;a=\r\nabc\r\n0\r\n\r\n", 400, 4);           // no value
    expect_error("3;a=\"x\r\nabc\r\n0\r\n\r\n", 400, 6);        // unbalanced quote
    expect_error("3;a=b c\r\nabc\r\n0\r\n\r\n", 400, 6);        // two tokens
    expect_error("3;a=b \r\nabc\r\n0\r\n\r\n", 400, 6);         // trailing whitespace
    expect_error("3;a@\r\nabc\r\n0\r\n\r\n", 400, 3);           // not a token
    expect_error("3;a=\"\x01\"\r\nabc\r\n0\r\n\r\n", 400, 5);   // CTL in quotes
    expect_error("3;a=\"x\\\r\"\r\nabc\r\n0\r\n\r\n", 400, 7);  // CR escaped
    expect_error("3;a=\"x\"y\r\nabc\r\n0\r\n\r\n", 400, 7);     // junk after quotes
    expect_error("3 ;a\r\nabc\r\n0\r\n\r\n", 400, 1);           // whitespace after the size
}

TEST(ChunkedDecoder, RefusesMalformedFraming) {
    expect_error("\r\n", 400, 0);                       // empty size
    expect_error("g\r\n", 400, 0);                      // not hex
    expect_error("-1\r\n", 400, 0);                     // sign
    expect_error("0x5\r\nhello\r\n0\r\n\r\n", 400, 1);  // prefix
    expect_error("5 \r\nhello\r\n0\r\n\r\n", 400, 1);   // space after size
    expect_error("5\t\r\nhello\r\n0\r\n\r\n", 400, 1);
    expect_error("5\nhello\r\n0\r\n\r\n", 400, 1);     // bare LF
    expect_error("5\r\rhello\r\n0\r\n\r\n", 400, 2);   // bare CR
    expect_error("5\r\nhelloX\r\n0\r\n\r\n", 400, 8);  // data longer than announced
    expect_error("5\r\nhello\nX0\r\n\r\n", 400, 8);    // bare LF after data
    expect_error("5\r\nhello\r0\r\n\r\n", 400, 9);     // bare CR after data
    expect_error("3\r\nfoo\r\n\r\n", 400, 8);          // missing last chunk
    expect_error("0\r\n\rX", 400, 4);                  // bare CR at the end
    expect_error("0\r\n\n", 400, 3);                   // bare LF at the end
    expect_error("0\r\n\0\r\n\r\n"s, 400, 3);          // NUL
    expect_error("10000000000000000\r\n", 400, 16);    // 2^64: overflow
    expect_error("fffffffffffffffff\r\n", 400, 16);
}

TEST(ChunkedDecoder, ValidatesAndDropsTrailers) {
    expect_body("5\r\nhello\r\n0\r\nVary: *\r\nContent-Type: text/plain\r\n\r\n", "hello");
    expect_body("0\r\nX:\r\n\r\n", "");
    expect_body("0\r\nX: \xff\t y\r\n\r\n", "");
    expect_error("0\r\n X: y\r\n\r\n", 400, 3);  // obs-fold
    expect_error("0\r\nX : y\r\n\r\n", 400, 4);  // space before colon
    expect_error("0\r\nX y\r\n\r\n", 400, 4);
    expect_error("0\r\nXy\r\n\r\n", 400, 5);        // no colon
    expect_error("0\r\n: y\r\n\r\n", 400, 3);       // empty name
    expect_error("0\r\nX: a\x01\r\n\r\n", 400, 7);  // CTL in value
    expect_error("0\r\nX: a\rb\r\n\r\n", 400, 8);   // bare CR
    expect_error("0\r\nX: a\nb\r\n\r\n", 400, 7);   // bare LF
}

TEST(ChunkedDecoder, EnforcesLimits) {
    // Body: exactly max_body is fine; one more is refused at the size line that crosses it.
    EXPECT_EQ(decode_every_way("5\r\nhello\r\n5\r\nworld\r\n0\r\n\r\n", 10).kind, Result::Done);
    Outcome o = decode_every_way("5\r\nhello\r\n6\r\nworld!\r\n0\r\n\r\n", 10);
    EXPECT_EQ(o.kind, Result::Error);
    EXPECT_EQ(o.status, 413);
    EXPECT_EQ(o.consumed, 12u);
    EXPECT_EQ(decode("ffffffffffffffff\r\n", 1 << 20).status, 413);

    // Trailer section: field lines only, the final CRLF not counted.
    const std::string trailer = "X: " + std::string(5, 'v') + "\r\n";  // 10 bytes
    EXPECT_EQ(decode_every_way("0\r\n" + trailer + "\r\n", 1 << 20, 10).kind, Result::Done);
    o = decode_every_way("0\r\n" + trailer + "\r\n", 1 << 20, 9);
    EXPECT_EQ(o.status, 431);
    EXPECT_EQ(o.consumed, 12u);
    EXPECT_EQ(decode_every_way("0\r\n\r\n", 1 << 20, 0).kind, Result::Done);

    // Chunk-size line, extensions included.
    const size_t max = ChunkedDecoder::kMaxSizeLine;
    expect_body(std::string(max - 1, '0') + "1\r\nx\r\n0\r\n\r\n", "x");
    EXPECT_EQ(decode(std::string(max, '0') + "1\r\nx\r\n0\r\n\r\n").status, 400);
    expect_body("1;e=" + std::string(max - 4, 'v') + "\r\nx\r\n0\r\n\r\n", "x");
    EXPECT_EQ(decode("1;e=" + std::string(max - 3, 'v') + "\r\nx\r\n0\r\n\r\n").status, 400);
}

TEST(ChunkedDecoder, StopsExactlyBeforePipelinedData) {
    const std::string body = "4\r\nWiki\r\n0\r\nT: x\r\n\r\n";
    const std::string next = "GET / HTTP/1.1\r\nHost: h\r\n\r\n";
    const Outcome o = decode_every_way(body + next);
    EXPECT_EQ(o.kind, Result::Done);
    EXPECT_EQ(o.consumed, body.size());
    EXPECT_EQ(o.body, "Wiki");

    // Done is sticky until reset(); reset() keeps the limits.
    ChunkedDecoder d(3);
    std::string out;
    Result r = d.feed("3\r\nabc\r\n0\r\n\r\nrest", out);
    EXPECT_EQ(r.kind, Result::Done);
    EXPECT_EQ(r.consumed, 13u);
    r = d.feed("rest", out);
    EXPECT_EQ(r.kind, Result::Done);
    EXPECT_EQ(r.consumed, 0u);
    d.reset();
    out.clear();
    r = d.feed("4\r\nabcd\r\n0\r\n\r\n", out);
    EXPECT_EQ(r.kind, Result::Error);
    EXPECT_EQ(r.status, 413);
}

TEST(ChunkedDecoder, RepeatsItsErrorAndWaitsOnPartialInput) {
    ChunkedDecoder d;
    std::string out;
    Result r = d.feed("5\r\nhel", out);
    EXPECT_EQ(r.kind, Result::NeedMore);
    EXPECT_EQ(r.consumed, 6u);
    EXPECT_EQ(out, "hel");
    r = d.feed("loX", out);
    EXPECT_EQ(r.kind, Result::Error);
    EXPECT_EQ(r.status, 400);
    EXPECT_EQ(r.consumed, 2u);
    r = d.feed("\r\n0\r\n\r\n", out);
    EXPECT_EQ(r.kind, Result::Error);
    EXPECT_EQ(r.status, 400);
    // An empty feed changes nothing.
    ChunkedDecoder e;
    EXPECT_EQ(e.feed("", out).kind, Result::NeedMore);
    EXPECT_EQ(e.feed("0\r\n\r\n", out).kind, Result::Done);
}

}  // namespace
