// Trailer fields in the HTTP/1.1 writer: a response with trailers is chunked whatever its body
// kind, its last chunk carries them, the names known when the head is written are announced,
// and HTTP/1.0, HEAD and bodiless statuses carry none.
#include <gtest/gtest.h>

#include "http/response_writer.hpp"

using rivet::http::Framing;
using rivet::http::ResponseHead;

namespace {

using Fields = std::vector<std::pair<std::string, std::string>>;
constexpr std::string_view kDate = "Date: X\r\nServer: rivet\r\n";

ResponseHead with(const Fields& trailers, std::string_view body = "hello") {
    ResponseHead res;
    res.content_type = "text/plain";
    res.body = body;
    res.trailers = &trailers;
    return res;
}

TEST(ResponseTrailers, BytesBodyIsOneChunkThenTheTrailers) {
    Fields trailers = {{"checksum", "abc"}, {"grpc-status", "0"}};
    std::string out;
    rivet::http::write_response(out, with(trailers), Framing{}, kDate);
    EXPECT_EQ(out,
              "HTTP/1.1 200 OK\r\nDate: X\r\nServer: rivet\r\nContent-Type: text/plain\r\n"
              "Transfer-Encoding: chunked\r\nTrailer: checksum, grpc-status\r\n\r\n"
              "5\r\nhello\r\n0\r\nchecksum: abc\r\ngrpc-status: 0\r\n\r\n");
}

TEST(ResponseTrailers, EmptyTrailersStillChunkAndAnnounceNothing) {
    Fields none;
    std::string out;
    rivet::http::write_response(out, with(none, ""), Framing{}, kDate);
    EXPECT_EQ(out,
              "HTTP/1.1 200 OK\r\nDate: X\r\nServer: rivet\r\nContent-Type: text/plain\r\n"
              "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n");
}

TEST(ResponseTrailers, Http10GetsContentLengthAndNoTrailers) {
    Fields trailers = {{"checksum", "abc"}};
    std::string out;
    rivet::http::write_response(out, with(trailers), Framing{false, true, 0}, kDate);
    EXPECT_EQ(out,
              "HTTP/1.1 200 OK\r\nDate: X\r\nServer: rivet\r\nContent-Type: text/plain\r\n"
              "Content-Length: 5\r\nConnection: keep-alive\r\n\r\nhello");
    EXPECT_FALSE(rivet::http::chunked_body(with(trailers), Framing{false, true, 0}));
}

TEST(ResponseTrailers, HeadGetsTheHeadOfGetWithoutBodyOrTrailers) {
    Fields trailers = {{"checksum", "abc"}};
    std::string out;
    rivet::http::write_response(out, with(trailers), Framing{true, true, 1}, kDate);
    EXPECT_TRUE(out.ends_with("Transfer-Encoding: chunked\r\nTrailer: checksum\r\n\r\n")) << out;
}

TEST(ResponseTrailers, BodilessStatusHasNeitherChunksNorTrailers) {
    Fields trailers = {{"checksum", "abc"}};
    ResponseHead res = with(trailers, "");
    res.status = 204;
    std::string out;
    rivet::http::write_response(out, res, Framing{}, kDate);
    EXPECT_EQ(out, "HTTP/1.1 204 No Content\r\nDate: X\r\nServer: rivet\r\n\r\n");
    EXPECT_FALSE(rivet::http::chunked_body(res, Framing{}));
}

TEST(ResponseTrailers, StreamedHeadAnnouncesThenTheLastChunkCarriesWhatIsThereAtTheEnd) {
    Fields trailers = {{"early", "1"}};
    ResponseHead res = with(trailers, "");
    res.body_kind = ResponseHead::Body::Streamed;
    std::string out;
    rivet::http::write_response(out, res, Framing{}, kDate);
    EXPECT_TRUE(out.ends_with("Transfer-Encoding: chunked\r\nTrailer: early\r\n\r\n")) << out;
    out.clear();
    trailers.emplace_back("late", "2");  // known only at the end: sent, not announced
    rivet::http::append_chunk(out, "abc");
    rivet::http::append_last_chunk(out, trailers);
    EXPECT_EQ(out, "3\r\nabc\r\n0\r\nearly: 1\r\nlate: 2\r\n\r\n");
}

TEST(ResponseTrailers, SizedBodyIsOneChunkTheCallerFills) {
    Fields trailers = {{"checksum", "abc"}};
    ResponseHead res = with(trailers, "");
    res.body_kind = ResponseHead::Body::Sized;
    res.content_length = 300;
    std::string out;
    rivet::http::write_response(out, res, Framing{}, kDate);
    EXPECT_EQ(out.find("Content-Length"), std::string::npos) << out;
    EXPECT_TRUE(out.ends_with("Trailer: checksum\r\n\r\n12c\r\n")) << out;
    out.clear();
    rivet::http::append_file_chunk_end(out, trailers);
    EXPECT_EQ(out, "\r\n0\r\nchecksum: abc\r\n\r\n");
    // An empty one is complete at once: no chunk of its own, the last chunk follows the head.
    res.content_length = 0;
    out.clear();
    rivet::http::write_response(out, res, Framing{}, kDate);
    EXPECT_TRUE(out.ends_with("Trailer: checksum\r\n\r\n0\r\nchecksum: abc\r\n\r\n")) << out;
}

TEST(ResponseTrailers, ATrailerFieldTheHandlerSetIsNotDoubled) {
    Fields trailers = {{"checksum", "abc"}};
    ResponseHead res = with(trailers);
    res.fields = {"Trailer: checksum, later\r\n"};
    std::string out;
    rivet::http::write_response(out, res, Framing{}, kDate);
    EXPECT_NE(out.find("Trailer: checksum, later\r\n"), std::string::npos) << out;
    EXPECT_EQ(out.find("Trailer: checksum\r\n"), std::string::npos) << out;
}

TEST(ResponseTrailers, NoTrailersNoChange) {
    ResponseHead res;
    res.body = "hello";
    std::string out;
    rivet::http::write_response(out, res, Framing{}, kDate);
    EXPECT_TRUE(out.ends_with("Content-Length: 5\r\n\r\nhello")) << out;
    EXPECT_FALSE(rivet::http::chunked_body(res, Framing{}));
}

TEST(ResponseTrailers, FieldsThatFrameRouteOrControlTheMessageAreRefused) {
    for (const char* name :
         {"Content-Length", "transfer-encoding", "HOST", "Connection", "TE", "Trailer",
          "Content-Type", "Content-Encoding", "Cache-Control", "Set-Cookie", "Authorization",
          "Keep-Alive", "Upgrade", "Location", "Retry-After", "Vary", "Date"})
        EXPECT_FALSE(rivet::http::trailer_field_allowed(name)) << name;
    for (const char* name :
         {"checksum", "grpc-status", "grpc-message", "Server-Timing", "Digest", "X-Content-Length"})
        EXPECT_TRUE(rivet::http::trailer_field_allowed(name)) << name;
}

}  // namespace
