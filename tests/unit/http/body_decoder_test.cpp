// The one request-body decoder: Content-Length counted off in any pieces, with or without a sink;
// chunked decoded into the sink; where the next request starts; errors repeated.
#include "http/body_decoder.hpp"

#include <gtest/gtest.h>

#include <string>

namespace rivet::http {
namespace {

using Result = BodyDecoder::Result;

TEST(BodyDecoder, ContentLengthInPiecesStopsAtItsLengthWithoutASink) {
    BodyDecoder d(BodyFraming::ContentLength, 10, 100);
    auto r = d.feed("0123", nullptr);
    EXPECT_EQ(r.kind, Result::NeedMore);
    EXPECT_EQ(r.consumed, 4u);
    r = d.feed("456789GET / HTTP/1.1", nullptr);
    EXPECT_EQ(r.kind, Result::Done);
    EXPECT_EQ(r.consumed, 6u) << "the next request is not the body's";
    EXPECT_EQ(d.received(), 10u);
    r = d.feed("more", nullptr);
    EXPECT_EQ(r.kind, Result::Done);
    EXPECT_EQ(r.consumed, 0u);
}

TEST(BodyDecoder, ContentLengthIntoASink) {
    BodyDecoder d(BodyFraming::ContentLength, 5, 100);
    std::string sink;
    EXPECT_EQ(d.feed("ab", &sink).kind, Result::NeedMore);
    EXPECT_EQ(d.feed("cdefg", &sink).kind, Result::Done);
    EXPECT_EQ(sink, "abcde");
}

TEST(BodyDecoder, ChunkedIntoTheSinkAcrossPieces) {
    const std::string wire = "5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nX-T: 1\r\n\r\nNEXT";
    for (size_t cut = 1; cut < wire.size(); ++cut) {
        BodyDecoder d(BodyFraming::Chunked, 0, 100);
        std::string sink;
        auto first = d.feed(std::string_view(wire).substr(0, cut), &sink);
        ASSERT_NE(first.kind, Result::Error) << cut;
        size_t used = first.consumed;
        if (first.kind == Result::NeedMore) {
            auto rest = d.feed(std::string_view(wire).substr(used), &sink);
            ASSERT_EQ(rest.kind, Result::Done) << cut;
            used += rest.consumed;
        }
        EXPECT_EQ(sink, "hello world") << cut;
        EXPECT_EQ(wire.substr(used), "NEXT") << cut;
        EXPECT_EQ(d.received(), 11u);
    }
}

TEST(BodyDecoder, ChunkedOverTheLimitAndMalformedAreRefused) {
    BodyDecoder big(BodyFraming::Chunked, 0, 4);
    std::string sink;
    auto r = big.feed("5\r\nhello\r\n0\r\n\r\n", &sink);
    EXPECT_EQ(r.kind, Result::Error);
    EXPECT_EQ(r.status, 413);
    BodyDecoder bad(BodyFraming::Chunked, 0, 100);
    r = bad.feed("zz\r\n", &sink);
    EXPECT_EQ(r.kind, Result::Error);
    EXPECT_EQ(r.status, 400);
    EXPECT_EQ(bad.feed("5\r\nhello\r\n", &sink).kind, Result::Error) << "an error is repeated";
}

}  // namespace
}  // namespace rivet::http
