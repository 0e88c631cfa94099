// Unit tests of the multipart/form-data parser: parts, fields and files, every split of a body
// into two and three pieces, boundary-like content, limits, and hostile inputs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "http/multipart_parser.hpp"

using namespace std::string_literals;
using rivet::http::MultipartLimits;
using rivet::http::MultipartParser;
using rivet::http::PartHead;
using Status = MultipartParser::Status;

namespace {

struct Part {
    PartHead head;
    std::string content;
    bool ended = false;
};

struct Collector : rivet::http::MultipartHandler {
    std::vector<Part> parts;
    bool on_part_begin(const PartHead& head) override {
        parts.push_back({head, {}, false});
        return true;
    }
    bool on_part_data(std::string_view bytes) override {
        EXPECT_FALSE(parts.empty());
        EXPECT_FALSE(bytes.empty());
        parts.back().content.append(bytes);
        return true;
    }
    bool on_part_end() override {
        parts.back().ended = true;
        return true;
    }
};

struct Outcome {
    Status status = Status::Ok;
    std::vector<Part> parts;
    std::string error;
};

// Feeds `body` cut at the given offsets, then finishes.
Outcome parse(std::string_view body, std::vector<size_t> cuts = {}, MultipartLimits lim = {},
              std::string_view boundary = "XyZ") {
    MultipartParser p(boundary, lim);
    Collector c;
    cuts.push_back(body.size());
    size_t pos = 0;
    Outcome o;
    for (size_t end : cuts) {
        o.status = p.feed(body.substr(pos, end - pos), c);
        pos = end;
        if (o.status != Status::Ok) break;
    }
    if (o.status == Status::Ok) o.status = p.finish();
    o.parts = std::move(c.parts);
    o.error = p.error();
    return o;
}

const std::string kBody =
    "preamble, dropped\r\n"
    "--XyZ\r\n"
    "Content-Disposition: form-data; name=\"title\"\r\n"
    "\r\n"
    "Hello\r\n--XyZ is not the end, nor \r\n--XyZa ... \r\n-\r\n"
    "--XyZ  \t\r\n"
    "content-disposition: form-data; name=\"doc\"; filename=\"a \\\"b\\\".txt\"\r\n"
    "Content-Type: application/octet-stream\r\n"
    "\r\n"
    "\r\n\r\n--Xy\r\r\n-\0bytes"s
    "\r\n--XyZ\r\n"
    "Content-Disposition: form-data; name=empty\r\n"
    "\r\n"
    "\r\n--XyZ--\r\n"
    "epilogue, dropped \r\n--XyZ\r\n";

void expect_kbody(const Outcome& o) {
    ASSERT_EQ(o.status, Status::Ok) << o.error;
    ASSERT_EQ(o.parts.size(), 3u);
    EXPECT_EQ(o.parts[0].head.name, "title");
    EXPECT_FALSE(o.parts[0].head.filename);
    EXPECT_EQ(o.parts[0].head.content_type, "text/plain");
    // A boundary-like string that is not a whole delimiter line is content.
    EXPECT_EQ(o.parts[0].content, "Hello\r\n--XyZ is not the end, nor \r\n--XyZa ... \r\n-");
    EXPECT_EQ(o.parts[1].head.name, "doc");
    EXPECT_EQ(o.parts[1].head.filename, "a \"b\".txt");
    EXPECT_EQ(o.parts[1].head.content_type, "application/octet-stream");
    EXPECT_EQ(o.parts[1].content, "\r\n\r\n--Xy\r\r\n-\0bytes"s);
    EXPECT_EQ(o.parts[2].head.name, "empty");
    EXPECT_EQ(o.parts[2].content, "");
    for (const Part& p : o.parts) EXPECT_TRUE(p.ended);
}

}  // namespace

TEST(MultipartParser, ParsesFieldsAndFilesInOnePiece) {
    expect_kbody(parse(kBody));
}

TEST(MultipartParser, EverySplitIntoTwoPiecesGivesTheSameParts) {
    for (size_t cut = 0; cut <= kBody.size(); ++cut) {
        SCOPED_TRACE(cut);
        expect_kbody(parse(kBody, {cut}));
    }
}

TEST(MultipartParser, EverySplitIntoThreePiecesGivesTheSameParts) {
    for (size_t a = 0; a <= kBody.size(); a += 3)
        for (size_t b = a; b <= kBody.size(); ++b) {
            SCOPED_TRACE(std::to_string(a) + "," + std::to_string(b));
            expect_kbody(parse(kBody, {a, b}));
        }
}

TEST(MultipartParser, OneByteAtATime) {
    std::vector<size_t> cuts;
    for (size_t i = 1; i < kBody.size(); ++i) cuts.push_back(i);
    expect_kbody(parse(kBody, cuts));
}

TEST(MultipartParser, ABodyThatStartsWithItsDelimiterAndHasNoHeaders) {
    Outcome o = parse("--XyZ\r\n\r\nx\r\n--XyZ--");
    EXPECT_EQ(o.status, Status::Malformed);
    EXPECT_EQ(o.error, "a part without Content-Disposition");
    o = parse("--XyZ\r\nContent-Disposition: form-data; name=a\r\n\r\n\r\n--XyZ--");
    ASSERT_EQ(o.status, Status::Ok) << o.error;
    EXPECT_EQ(o.parts.size(), 1u);
}

TEST(MultipartParser, ABoundaryThatNeverEndsIsMalformed) {
    Outcome o = parse(
        "--XyZ\r\nContent-Disposition: form-data; name=a\r\n\r\nabc\r\n--XyZ\r\n"
        "Content-Disposition: form-data; name=b\r\n\r\nmore and more");
    EXPECT_EQ(o.status, Status::Malformed);
    EXPECT_EQ(o.error, "the body ends before its closing boundary");
    EXPECT_EQ(o.parts.size(), 2u);
    o = parse("no boundary at all");
    EXPECT_EQ(o.status, Status::Malformed);
    EXPECT_EQ(o.error, "no boundary in the body");
    o = parse("");
    EXPECT_EQ(o.status, Status::Malformed);
}

TEST(MultipartParser, HostileHeaderBlocks) {
    const std::pair<const char*, const char*> cases[] = {
        {"Content-Disposition: attachment; name=a",
         "a part header: Content-Disposition is not form-data"},
        {"Content-Disposition: form-data", "a part without a name in its Content-Disposition"},
        {"Content-Disposition: form-data; name=\"a",
         "a part header: a malformed Content-Disposition parameter"},
        {"Content-Disposition: form-data; name",
         "a part header: a malformed Content-Disposition parameter"},
        {"no colon", "a part header: whitespace before colon"},
        {"Content-Disposition: form-data;\r\n name=a", "a part header: obsolete line folding"},
        {"Content-Disposition: form-data; name=a; filename=\"a\x01b\"",
         "a part header: invalid character in field value"},
    };
    for (const auto& [header, error] : cases)
        EXPECT_EQ(parse("--XyZ\r\n"s + header + "\r\n\r\n\r\n--XyZ--").error, error) << header;
    // Boundary-like lines that are not delimiter lines are content (here the preamble's).
    for (const char* body : {"--XyZ-x", "--XyZx\r\n", "--XyZ \rx", "--XyZ\r\r\n"})
        EXPECT_EQ(parse(body).error, "no boundary in the body") << body;
}

TEST(MultipartParser, ALineThatIsAlmostADelimiterIsContentAndTheNextOneCounts) {
    // The byte that shows a line is not a delimiter ('\r' here) may itself start the real one.
    const std::string body =
        "--XyZ\r\nContent-Disposition: form-data; name=a\r\n\r\n"
        "x\r\n--XyZ \t\r\r\n--XyZ-\r\n--XyZ--";
    for (size_t cut = 0; cut <= body.size(); ++cut) {
        const Outcome o = parse(body, {cut});
        ASSERT_EQ(o.status, Status::Ok) << cut << o.error;
        ASSERT_EQ(o.parts.size(), 1u);
        EXPECT_EQ(o.parts[0].content, "x\r\n--XyZ \t\r\r\n--XyZ-");
    }
    const std::string dash =
        "--XyZ\r\nContent-Disposition: form-data; name=a\r\n\r\n"
        "\r\n--XyZ-\r\n--XyZ--";
    EXPECT_EQ(parse(dash).parts.at(0).content, "\r\n--XyZ-");
}

TEST(MultipartParser, BackslashesEscapeOnlyQuotesAndThemselves) {
    const Outcome o = parse(
        "--XyZ\r\nContent-Disposition: form-data; name=f; filename=\"C:\\dir\\\\a\\\"b\\x\"\r\n"
        "\r\nv\r\n--XyZ--");
    ASSERT_EQ(o.status, Status::Ok) << o.error;
    EXPECT_EQ(o.parts.at(0).head.filename, "C:\\dir\\a\"b\\x");
}

TEST(MultipartParser, HeaderBlockLimitIsExactAndHoldsInPieces) {
    const std::string cd = "Content-Disposition: form-data; name=a\r\n";
    const std::string body =
        "--XyZ\r\n" + cd + "X: " + std::string(100, 'h') + "\r\n\r\nv\r\n--XyZ--";
    const size_t block = cd.size() + 3 + 100 + 4;  // up to and with the empty line
    MultipartLimits lim;
    lim.max_header_bytes = block;
    EXPECT_EQ(parse(body, {}, lim).status, Status::Ok);
    EXPECT_EQ(parse(body, {20, 60, 90}, lim).status, Status::Ok);
    lim.max_header_bytes = block - 1;
    EXPECT_EQ(parse(body, {}, lim).status, Status::HeaderTooLarge);
    EXPECT_EQ(parse(body, {20, 60, 90}, lim).status, Status::HeaderTooLarge);
    // A block that never ends is refused at the limit, not held.
    lim.max_header_bytes = 1024;
    EXPECT_EQ(parse("--XyZ\r\n" + std::string(1 << 20, 'h'), {}, lim).status,
              Status::HeaderTooLarge);
}

TEST(MultipartParser, PartCountLimit) {
    std::string body;
    for (int i = 0; i < 5; ++i)
        body += "--XyZ\r\nContent-Disposition: form-data; name=a\r\n\r\nv\r\n";
    body += "--XyZ--";
    MultipartLimits lim;
    lim.max_parts = 5;
    EXPECT_EQ(parse(body, {}, lim).status, Status::Ok);
    lim.max_parts = 4;
    Outcome o = parse(body, {}, lim);
    EXPECT_EQ(o.status, Status::TooManyParts);
    EXPECT_EQ(o.parts.size(), 4u);
}

TEST(MultipartParser, AHandlerThatStopsStopsTheParse) {
    struct Stopper : Collector {
        bool on_part_data(std::string_view) override { return false; }
    } h;
    MultipartParser p("XyZ", {});
    EXPECT_EQ(p.feed(kBody, h), Status::Stopped);
}

TEST(MultipartParser, LargeContentPassesThroughWithoutBeingHeld) {
    // 4 MiB of content fed in 4 KiB pieces: each piece is handed on before the next arrives.
    MultipartParser p("XyZ", {});
    struct Counter : rivet::http::MultipartHandler {
        size_t bytes = 0;
        size_t ends = 0;
        bool on_part_begin(const PartHead&) override { return true; }
        bool on_part_data(std::string_view b) override {
            bytes += b.size();
            return true;
        }
        bool on_part_end() override { return ++ends, true; }
    } h;
    ASSERT_EQ(p.feed("--XyZ\r\nContent-Disposition: form-data; name=f; filename=x\r\n\r\n", h),
              Status::Ok);
    const std::string piece(4096, '\r');  // every byte a possible delimiter start
    for (int i = 0; i < 1024; ++i) {
        ASSERT_EQ(p.feed(piece, h), Status::Ok);
        EXPECT_GE(h.bytes + 6, size_t(i + 1) * piece.size());  // at most "\r\n--XyZ" - 1 held
    }
    ASSERT_EQ(p.feed("\r\n--XyZ--\r\n", h), Status::Ok);
    EXPECT_EQ(p.finish(), Status::Ok);
    EXPECT_EQ(h.bytes, size_t(4) << 20);
    EXPECT_EQ(h.ends, 1u);
}

TEST(MultipartBoundary, FromContentType) {
    using rivet::http::multipart_boundary;
    EXPECT_EQ(multipart_boundary("multipart/form-data; boundary=abc"), "abc");
    EXPECT_EQ(multipart_boundary("Multipart/Form-Data ; charset=x; Boundary=\"a b:c\""), "a b:c");
    EXPECT_EQ(multipart_boundary("multipart/form-data; boundary=" + std::string(70, 'x')),
              std::string(70, 'x'));
    EXPECT_FALSE(multipart_boundary("multipart/form-data; boundary=" + std::string(71, 'x')));
    EXPECT_FALSE(multipart_boundary("multipart/form-data"));
    EXPECT_FALSE(multipart_boundary("multipart/form-data; boundary="));
    EXPECT_FALSE(multipart_boundary("multipart/form-data; boundary=\"abc"));
    EXPECT_FALSE(multipart_boundary("multipart/form-data; boundary=\"ab \""));
    EXPECT_FALSE(multipart_boundary("multipart/form-data; boundary=a\rb"));
    EXPECT_FALSE(multipart_boundary("multipart/form-data; boundary=\"a\\\"b\""));
    EXPECT_FALSE(multipart_boundary("multipart/mixed; boundary=abc"));
    EXPECT_FALSE(multipart_boundary("text/plain"));
}
