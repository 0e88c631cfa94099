// rivet::compression(): Accept-Encoding negotiation, each coding decoded back by its reference
// decoder, every rule that leaves a response alone, and the fields it sets (Vary, ETag).
#include <rivet/compression.hpp>

#include <brotli/decode.h>
#include <gtest/gtest.h>
#include <zlib.h>
#include <zstd.h>

#include <atomic>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "app/compression/compressible_type.hpp"
#include "app/compression/compression_codecs.hpp"
#include "app/request/response_access.hpp"
#include "app/routing/router.hpp"
#include "http/request_parser.hpp"

namespace {

using rivet::CompressionOptions;
using rivet::ContentCoding;
using rivet::Response;

// A parsed request with the given Accept-Encoding ("" for none) and method.
struct Parsed {
    std::string bytes;
    std::vector<rivet::http::Header> storage = std::vector<rivet::http::Header>(16);
    rivet::http::RequestHead head;
    rivet::app::RouteParams params;

    explicit Parsed(std::string_view accept_encoding, std::string_view method = "GET") {
        bytes = std::string(method) + " /x HTTP/1.1\r\nHost: h\r\n";
        if (!accept_encoding.empty())
            bytes += "Accept-Encoding: " + std::string(accept_encoding) + "\r\n";
        bytes += "\r\n";
        auto r = rivet::http::parse_request_head(bytes, head, storage, {});
        EXPECT_EQ(r.kind, rivet::http::ParseResult::Complete);
    }
    rivet::Request request() const { return rivet::Request(head, {}, params); }
};

std::string json_body(size_t size) {
    std::string s = "[";
    for (int i = 0; s.size() < size; ++i)
        s += "{\"id\":" + std::to_string(i) + ",\"name\":\"user" + std::to_string(i) +
             "\",\"active\":true},";
    s.resize(size - 1);
    return s + "]";
}

std::string random_bytes(size_t size) {
    std::mt19937 rng(7);
    std::string s(size, '\0');
    for (char& c : s) c = char(rng());
    return s;
}

Response json_response(size_t size) {
    Response res;
    res.body(json_body(size), "application/json");
    return res;
}

// Runs the middleware's after() as the App would, for a request accepting `accept_encoding`,
// then the work it left on a large body, as the App's worker would.
void run(Response& res, std::string_view accept_encoding, CompressionOptions options = {},
         std::string_view method = "GET") {
    Parsed p(accept_encoding, method);
    rivet::compression(std::move(options))->after(p.request(), res);
    if (auto work = rivet::detail::ResponseAccess::take_body_work(res)) work->run(res);
}

std::string gunzip(const std::string& in) {
    z_stream z{};
    EXPECT_EQ(inflateInit2(&z, 15 + 16), Z_OK);  // gzip wrapper only
    std::string out(1 << 20, '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    z.avail_in = uInt(in.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = uInt(out.size());
    EXPECT_EQ(inflate(&z, Z_FINISH), Z_STREAM_END);
    out.resize(z.total_out);
    inflateEnd(&z);
    return out;
}

std::string unbrotli(const std::string& in) {
    std::string out(1 << 20, '\0');
    size_t size = out.size();
    EXPECT_EQ(BrotliDecoderDecompress(in.size(), reinterpret_cast<const uint8_t*>(in.data()), &size,
                                      reinterpret_cast<uint8_t*>(out.data())),
              BROTLI_DECODER_RESULT_SUCCESS);
    out.resize(size);
    return out;
}

std::string unzstd(const std::string& in) {
    std::string out(1 << 20, '\0');
    size_t size = ZSTD_decompress(out.data(), out.size(), in.data(), in.size());
    EXPECT_FALSE(ZSTD_isError(size)) << ZSTD_getErrorName(size);
    out.resize(ZSTD_isError(size) ? 0 : size);
    return out;
}

TEST(CompressionTypes, Patterns) {
    const auto& types = CompressionOptions{}.types;
    using rivet::app::compressible_type;
    EXPECT_TRUE(compressible_type("text/html; charset=utf-8", types));
    EXPECT_TRUE(compressible_type("TEXT/CSS", types));
    EXPECT_TRUE(compressible_type("application/json", types));
    EXPECT_TRUE(compressible_type("application/problem+json", types));
    EXPECT_TRUE(compressible_type("application/atom+xml;charset=utf-8", types));
    EXPECT_TRUE(compressible_type("image/svg+xml", types));
    EXPECT_TRUE(compressible_type("application/javascript", types));
    EXPECT_FALSE(compressible_type("image/png", types));
    EXPECT_FALSE(compressible_type("application/octet-stream", types));
    EXPECT_FALSE(compressible_type("application/+json", types));  // no subtype before "+json"
    EXPECT_FALSE(compressible_type("", types));
    EXPECT_FALSE(compressible_type("text", types));
    EXPECT_FALSE(compressible_type("application/json", {}));
    EXPECT_TRUE(rivet::app::valid_type_pattern("application/*+xml"));
    EXPECT_FALSE(rivet::app::valid_type_pattern("*/json"));
    EXPECT_FALSE(rivet::app::valid_type_pattern("text"));
    EXPECT_FALSE(rivet::app::valid_type_pattern("text/"));
    EXPECT_FALSE(rivet::app::valid_type_pattern("application/*+"));
    EXPECT_FALSE(rivet::app::valid_type_pattern("application/x*"));
}

// The remembered verdicts are compressible_type()'s: for literals (kept by address), for
// run-time strings (never kept), for more literals than there are slots, and across threads.
TEST(CompressionTypes, RememberedVerdictsAreThePatterns) {
    const auto& patterns = CompressionOptions{}.types;
    rivet::app::CompressibleTypes types(patterns);
    static constexpr std::string_view kLiterals[] = {"text/html; charset=utf-8", "image/png",
                                                     "application/json", "font/woff2"};
    for (int round = 0; round < 3; ++round)
        for (std::string_view t : kLiterals)
            EXPECT_EQ(types(t, true), rivet::app::compressible_type(t, patterns)) << t;
    EXPECT_EQ(types.remembered(), std::size(kLiterals));

    // A run-time string is judged afresh each time, even when a buffer is reused.
    std::string reused = "text/plain";
    EXPECT_TRUE(types(reused, false));
    reused = "image/jpeg";
    EXPECT_FALSE(types(reused, false));
    EXPECT_EQ(types.remembered(), std::size(kLiterals));

    // Views of one buffer at distinct addresses stand in for more literals than the slots:
    // past a full neighbourhood a type is judged without being kept, never misjudged.
    std::string many;
    for (int i = 0; i < 200; ++i) many += (i % 2 ? "text/x-" : "image/x") + std::to_string(i) + ";";
    std::vector<std::string_view> views;
    for (size_t at = 0; at < many.size();) {
        size_t end = many.find(';', at);
        views.push_back(std::string_view(many).substr(at, end - at));
        at = end + 1;
    }
    for (int round = 0; round < 2; ++round)
        for (std::string_view v : views) ASSERT_EQ(types(v, true), v.starts_with("text/")) << v;
    EXPECT_LE(types.remembered(), size_t(64));
}

TEST(CompressionTypes, ThreadsShareTheVerdicts) {
    const auto& patterns = CompressionOptions{}.types;
    rivet::app::CompressibleTypes types(patterns);
    static constexpr std::string_view kLiterals[] = {"text/css; charset=utf-8", "image/gif",
                                                     "application/wasm", "video/mp4"};
    std::atomic<int> wrong{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&] {
            for (int i = 0; i < 2000; ++i)
                for (std::string_view l : kLiterals)
                    if (types(l, true) != rivet::app::compressible_type(l, patterns)) ++wrong;
        });
    for (auto& th : threads) th.join();
    EXPECT_EQ(wrong.load(), 0);
    EXPECT_EQ(types.remembered(), std::size(kLiterals));
}

TEST(Compression, EachCodingRoundTripsByteExact) {
    const std::string original = json_body(64 * 1024);
    struct Case {
        const char* accept;
        const char* name;
        std::string (*decode)(const std::string&);
    };
    for (Case c :
         {Case{"gzip", "gzip", gunzip}, Case{"br", "br", unbrotli}, Case{"zstd", "zstd", unzstd}}) {
        Response res;
        res.body(original, "application/json");
        run(res, c.accept);
        EXPECT_EQ(res.header("Content-Encoding"), c.name);
        EXPECT_EQ(res.header("Vary"), "Accept-Encoding");
        EXPECT_LT(res.body().size(), original.size() / 4) << c.name;
        EXPECT_TRUE(c.decode(res.body()) == original) << c.name;
    }
}

TEST(Compression, EveryLevelRoundTrips) {
    const std::string original = json_body(8 * 1024);
    for (int level = 1; level <= 9; ++level) {
        Response res;
        res.body(original, "text/plain");
        run(res, "gzip", {.gzip_level = level});
        EXPECT_TRUE(gunzip(res.body()) == original) << level;
    }
    for (int level = 0; level <= 11; ++level) {
        Response res;
        res.body(original, "text/plain");
        run(res, "br", {.brotli_level = level});
        EXPECT_TRUE(unbrotli(res.body()) == original) << level;
    }
    for (int level : {1, 3, 9, 19}) {
        Response res;
        res.body(original, "text/plain");
        run(res, "zstd", {.zstd_level = level});
        EXPECT_TRUE(unzstd(res.body()) == original) << level;
    }
}

TEST(Compression, MinimumSizeIsInclusive) {
    Response below = json_response(1023), at = json_response(1024);
    run(below, "gzip");
    run(at, "gzip");
    EXPECT_EQ(below.header("Content-Encoding"), "");
    EXPECT_EQ(below.header("Vary"), "");  // never compressed, whatever the request: no Vary
    EXPECT_EQ(below.body().size(), 1023u);
    EXPECT_EQ(at.header("Content-Encoding"), "gzip");
    Response custom = json_response(200);
    run(custom, "gzip", {.min_size = 100});
    EXPECT_EQ(custom.header("Content-Encoding"), "gzip");
}

TEST(Compression, IdentityForThisClientStillVaries) {
    Response res = json_response(4096);
    res.header("ETag", "\"v1\"");
    std::string before = res.body();
    run(res, "");
    EXPECT_EQ(res.header("Content-Encoding"), "");
    EXPECT_EQ(res.header("Vary"), "Accept-Encoding");
    EXPECT_EQ(res.header("ETag"), "\"v1\"");  // the identity body keeps its strong validator
    EXPECT_EQ(res.body(), before);
}

TEST(Compression, NotSmallerIsSentAsItIs) {
    Response res;
    res.body(random_bytes(8192), "text/plain");
    std::string before = res.body();
    run(res, "gzip, br, zstd");
    EXPECT_EQ(res.header("Content-Encoding"), "");
    EXPECT_EQ(res.header("Vary"), "Accept-Encoding");
    EXPECT_EQ(res.body(), before);
}

TEST(Compression, SkipsResponsesThatMustNotChange) {
    auto unchanged = [](Response res, const char* why) {
        std::string body = res.body();
        run(res, "gzip, br, zstd");
        EXPECT_EQ(res.body(), body) << why;
        EXPECT_EQ(res.header("Vary"), "") << why;
        return res;
    };
    Response no_content = json_response(4096);
    no_content.status(204);
    unchanged(no_content, "204");
    Response not_modified = json_response(4096);
    not_modified.status(304);
    unchanged(not_modified, "304");
    Response partial = json_response(4096);
    partial.status(206).header("Content-Range", "bytes 0-4095/9000");
    unchanged(partial, "206");
    Response range_error = json_response(4096);
    range_error.status(416).header("Content-Range", "bytes */9000");
    unchanged(range_error, "Content-Range");
    Response image;
    image.body(json_body(4096), "image/png");
    unchanged(image, "type");
    Response no_transform = json_response(4096);
    no_transform.header("Cache-Control", "private, No-Transform");
    unchanged(no_transform, "no-transform");
    Response encoded = json_response(4096);
    encoded.header("Content-Encoding", "br");
    EXPECT_EQ(unchanged(encoded, "encoded").header("Content-Encoding"), "br");
}

TEST(Compression, FilesAndStreamsAreLeftAlone) {
    Response file;
    file.file({std::make_shared<rivet::OpenFile>(-1), 0, 8192}, "text/html");
    run(file, "gzip");
    EXPECT_EQ(file.header("Content-Encoding"), "");
    ASSERT_NE(file.file_range(), nullptr);
    Response stream;
    stream.stream([](std::string& out) { return out.append(4096, 'a'), false; }, "text/plain");
    run(stream, "gzip");
    EXPECT_EQ(stream.header("Content-Encoding"), "");
    EXPECT_NE(stream.producer(), nullptr);
}

TEST(Compression, VaryIsMergedIntoOneField) {
    Response res = json_response(4096);
    res.header("Vary", "Origin").header("X-Other", "1").header("Vary", "Cookie");
    run(res, "gzip");
    EXPECT_EQ(res.header("Vary"), "Origin, Cookie, Accept-Encoding");
    int varies = 0;
    for (auto [name, value] : res.headers()) varies += name == "Vary";
    EXPECT_EQ(varies, 1);

    Response listed = json_response(4096);
    listed.header("Vary", "origin, accept-encoding");
    run(listed, "gzip");
    EXPECT_EQ(listed.header("Vary"), "origin, accept-encoding");

    Response star = json_response(4096);
    star.header("Vary", "*");
    run(star, "gzip");
    EXPECT_EQ(star.header("Vary"), "*");
    EXPECT_EQ(star.header("Content-Encoding"), "gzip");
}

TEST(Compression, StrongETagBecomesWeakAndRangesGo) {
    Response res = json_response(4096);
    res.header("ETag", "\"abc\"").header("Accept-Ranges", "bytes");
    run(res, "zstd");
    EXPECT_EQ(res.header("ETag"), "W/\"abc\"");
    EXPECT_EQ(res.header("Accept-Ranges"), "");
    Response weak = json_response(4096);
    weak.header("ETag", "W/\"x\"");
    run(weak, "zstd");
    EXPECT_EQ(weak.header("ETag"), "W/\"x\"");
}

TEST(Compression, HeadGetsWhatGetGets) {
    Response get = json_response(4096), head = json_response(4096);
    get.header("ETag", "\"e\"");
    head.header("ETag", "\"e\"");
    run(get, "br", {}, "GET");
    run(head, "br", {}, "HEAD");
    EXPECT_EQ(head.headers(), get.headers());
    EXPECT_EQ(head.body().size(), get.body().size());  // the Content-Length the engine writes
}

TEST(Compression, ErrorResponsesAreCompressedToo) {
    Response res = json_response(4096);
    res.status(404);
    run(res, "gzip");
    EXPECT_EQ(res.header("Content-Encoding"), "gzip");
}

TEST(Compression, OptionsAreChecked) {
    EXPECT_THROW(rivet::compression({.gzip_level = 0}), std::invalid_argument);
    EXPECT_THROW(rivet::compression({.gzip_level = 10}), std::invalid_argument);
    EXPECT_THROW(rivet::compression({.brotli_level = 12}), std::invalid_argument);
    EXPECT_THROW(rivet::compression({.zstd_level = 0}), std::invalid_argument);
    EXPECT_THROW(rivet::compression({.zstd_level = 23}), std::invalid_argument);
    EXPECT_THROW(rivet::compression({.types = {"json"}}), std::invalid_argument);
    EXPECT_NO_THROW(rivet::compression({.brotli_level = 0}));
    Response res = json_response(4096);
    run(res, "gzip, br, zstd", {.codings = {}});
    EXPECT_EQ(res.header("Content-Encoding"), "");
    EXPECT_EQ(res.header("Vary"), "");
}

TEST(Compression, LargeBodyIsLeftForAWorker) {
    using rivet::detail::ResponseAccess;
    for (size_t size : {rivet::app::kWorkerBodyBytes - 1, rivet::app::kWorkerBodyBytes}) {
        Response res = json_response(size);
        res.header("ETag", "\"v1\"");
        std::string original = res.body();
        Parsed p("br");
        rivet::compression()->after(p.request(), res);
        EXPECT_EQ(res.header("Vary"), "Accept-Encoding");  // known on the loop already
        if (size < rivet::app::kWorkerBodyBytes) {
            EXPECT_FALSE(ResponseAccess::has_body_work(res));
            EXPECT_EQ(res.header("Content-Encoding"), "br");
            continue;
        }
        // Untouched until the work runs: the loop only negotiated.
        EXPECT_EQ(res.body(), original);
        EXPECT_EQ(res.header("Content-Encoding"), "");
        auto work = ResponseAccess::take_body_work(res);
        ASSERT_TRUE(work);
        EXPECT_FALSE(ResponseAccess::has_body_work(res));  // taken: it runs once
        work->run(res);
        EXPECT_EQ(res.header("Content-Encoding"), "br");
        EXPECT_EQ(res.header("ETag"), "W/\"v1\"");
        EXPECT_EQ(unbrotli(res.body()), original);
    }
}

TEST(Compression, WorkOnABodyALaterAfterChangedIsSkipped) {
    using rivet::detail::ResponseAccess;
    Response res = json_response(rivet::app::kWorkerBodyBytes * 2);
    Parsed p("gzip");
    rivet::compression()->after(p.request(), res);
    auto work = ResponseAccess::take_body_work(res);
    ASSERT_TRUE(work);
    res.header("Content-Encoding", "gzip");  // another middleware encoded it meanwhile
    std::string before = res.body();
    work->run(res);
    EXPECT_EQ(res.body(), before);
    size_t encodings = 0;
    for (auto [name, value] : res.headers()) encodings += name == "Content-Encoding";
    EXPECT_EQ(encodings, 1u);
}

TEST(Compression, LevelFollowsTheBodySize) {
    using rivet::app::kCheapLevelBodyBytes;
    using rivet::app::level_for_size;
    const size_t small = kCheapLevelBodyBytes - 1, large = kCheapLevelBodyBytes;
    EXPECT_EQ(level_for_size(ContentCoding::Brotli, 4, small), 4);
    EXPECT_EQ(level_for_size(ContentCoding::Brotli, 4, large), rivet::app::kCheapBrotliLevel);
    EXPECT_EQ(level_for_size(ContentCoding::Brotli, 11, large), rivet::app::kCheapBrotliLevel);
    EXPECT_EQ(level_for_size(ContentCoding::Brotli, 0, large), 0);  // never above the configured
    EXPECT_EQ(level_for_size(ContentCoding::Zstd, 3, small), 3);
    EXPECT_EQ(level_for_size(ContentCoding::Zstd, 19, large), rivet::app::kCheapZstdLevel);
    EXPECT_EQ(level_for_size(ContentCoding::Gzip, 9, small), 9);
    EXPECT_EQ(level_for_size(ContentCoding::Gzip, 9, large), rivet::app::kCheapGzipLevel);
    for (ContentCoding c : {ContentCoding::Gzip, ContentCoding::Brotli, ContentCoding::Zstd})
        EXPECT_TRUE(rivet::app::valid_level(c, level_for_size(c, 9, large)));
}

TEST(Compression, ManyThreadsEachWithTheirOwnContexts) {
    auto mw = rivet::compression();
    const std::string original = json_body(32 * 1024);
    std::vector<std::thread> threads;
    std::atomic<int> good{0};
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            const char* accept = t % 3 == 0 ? "gzip" : t % 3 == 1 ? "br" : "zstd";
            Parsed p(accept);
            for (int i = 0; i < 50; ++i) {
                Response res;
                res.body(original, "text/plain");
                mw->after(p.request(), res);
                std::string back = t % 3 == 0   ? gunzip(res.body())
                                   : t % 3 == 1 ? unbrotli(res.body())
                                                : unzstd(res.body());
                good += back == original;
            }
        });
    for (auto& th : threads) th.join();
    EXPECT_EQ(good.load(), 200);
}

}  // namespace
