// Response trailers over HTTP/1.1 (engine ReplyView::trailers): read when the body ends, sent in
// the last chunk whatever the body kind (streamed, bytes, a file), carried through the queue of
// pipelined answers, dropped for HTTP/1.0, and not sent when a drain cuts a stream short.
#include <gtest/gtest.h>

#include <unistd.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "engine_harness.hpp"

namespace rivet::engine::testing {
namespace {

// A pull stream of `pieces`, whose last call adds "count: <bytes sent>" through the handle.
rivet::Response counted_stream(std::vector<std::string> pieces) {
    rivet::Response res;
    rivet::Trailers trailers = res.trailers();
    auto left = std::make_shared<std::vector<std::string>>(std::move(pieces));
    auto sent = std::make_shared<size_t>(0);
    res.stream(
        [left, sent, trailers](std::string& out) mutable {
            if (!left->empty()) {
                out = left->front();
                *sent += out.size();
                left->erase(left->begin());
                return true;
            }
            trailers.add("count", std::to_string(*sent));
            return false;
        },
        "text/plain");
    return res;
}

TEST(EngineTrailers, AStreamsProducerAddsThemAtItsEnd) {
    EngineHarness h({}, [](Exchange& ex) {
        rivet::Response res = counted_stream({"one ", "two ", "three"});
        ex.respond(app::view_of(res));
    });
    auto c = h.connect();
    c->send(get("/s") + get("/s"));  // the connection goes on after the trailers
    auto got = c->read_responses(2);
    ASSERT_EQ(got.size(), 2u);
    for (auto& r : got) {
        EXPECT_TRUE(r.chunked);
        EXPECT_EQ(r.body, "one two three");
        EXPECT_EQ(r.trailers, "count: 13\r\n");
        EXPECT_EQ(r.field("Trailer"), "");  // nothing was known when the head left
    }
    EXPECT_TRUE(got[1].raw.ends_with("5\r\nthree\r\n0\r\ncount: 13\r\n\r\n"));
}

TEST(EngineTrailers, APlainBodyWithTrailersIsChunkedOn11) {
    EngineHarness h({}, [](Exchange& ex) {
        rivet::Response res;
        res.text("hello").trailer("checksum", "abc");
        ex.respond(app::view_of(res));
    });
    auto c = h.connect();
    c->send(get("/p"));
    auto got = c->read_responses(1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].field("Content-Length"), "");
    EXPECT_EQ(got[0].field("Trailer"), "checksum");
    EXPECT_EQ(got[0].body, "hello");
    EXPECT_EQ(got[0].trailers, "checksum: abc\r\n");
}

TEST(EngineTrailers, Http10GetsTheBodyWithoutThem) {
    EngineHarness h({}, [](Exchange& ex) {
        if (ex.head().path == "/stream") {
            rivet::Response res = counted_stream({"ab", "cd"});
            return ex.respond(app::view_of(res));
        }
        rivet::Response res;
        res.text("hello").trailer("checksum", "abc");
        ex.respond(app::view_of(res));
    });
    auto c = h.connect();
    c->send("GET /p HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    auto got = c->read_responses(1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].field("Content-Length"), "5");
    EXPECT_EQ(got[0].raw.find("checksum"), std::string::npos);
    c->clear();
    c->send("GET /stream HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");  // runs until the close
    ASSERT_TRUE(c->wait_eof());
    got = parse_responses(c->received(), {}, true);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_FALSE(got[0].chunked);
    EXPECT_EQ(got[0].body, "abcd");
}

TEST(EngineTrailers, QueuedAndDeferredAnswersKeepThem) {
    // The first request's answer is deferred: the second's waits in the queue (an owned copy,
    // Reply::copy_of) and leaves with its trailers after the first, itself an owned Reply with
    // trailers of its own (reply_of, from another thread).
    EngineHarness h({}, [&](Exchange& ex) {
        if (ex.head().path == "/defer") return h.app().keep(ex.defer());
        rivet::Response res = counted_stream({"queued"});
        ex.respond(app::view_of(res));
    });
    auto c = h.connect();
    c->send(get("/defer") + get("/now"));
    ASSERT_TRUE(h.app().wait_served(2));
    auto deferred = h.app().take_deferred(1);
    ASSERT_EQ(deferred.size(), 1u);
    std::thread([d = std::move(deferred[0])]() mutable {
        rivet::Response res;
        res.text("later").trailer("grpc-status", "0").trailer("grpc-message", "fine");
        d.complete(app::reply_of(std::move(res)));
    }).join();
    auto got = c->read_responses(2);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0].body, "later");
    EXPECT_EQ(got[0].field("Trailer"), "grpc-status, grpc-message");
    EXPECT_EQ(got[0].trailers, "grpc-status: 0\r\ngrpc-message: fine\r\n");
    EXPECT_EQ(got[1].body, "queued");
    EXPECT_EQ(got[1].trailers, "count: 6\r\n");
}

TEST(EngineTrailers, AFileBodyIsOneChunkThenTheTrailers) {
    char name[] = "/tmp/rivet-trailers-XXXXXX";
    const int fd = mkstemp(name);
    ASSERT_GE(fd, 0);
    unlink(name);
    std::string bytes;
    for (size_t i = 0; i < 700'000; ++i) bytes.push_back(char('a' + i % 26));  // several pieces
    ASSERT_EQ(write(fd, bytes.data(), bytes.size()), ssize_t(bytes.size()));
    // Non-null: the engine tells a file body by its owner.
    std::shared_ptr<const void> owner(new int(fd), [](const int* p) {
        close(*p);
        delete p;
    });
    EngineHarness h({}, [&](Exchange& ex) {
        ReplyView v;
        v.head.content_type = "text/plain";
        v.head.body_kind = http::ResponseHead::Body::Sized;
        v.head.content_length = bytes.size() - 10;
        v.file = {owner, fd, 10, bytes.size() - 10};
        v.trailers = std::make_shared<Trailers>();
        v.trailers->fields.emplace_back("checksum", "xyz");
        ex.respond(v);
    });
    auto c = h.connect();
    c->send(get("/f") + get("/f"));
    auto got = c->read_responses(2, 5000ms);
    ASSERT_EQ(got.size(), 2u);
    for (auto& r : got) {
        EXPECT_TRUE(r.chunked);
        EXPECT_EQ(r.field("Content-Length"), "");
        EXPECT_TRUE(r.body == bytes.substr(10)) << r.body.size();
        EXPECT_EQ(r.trailers, "checksum: xyz\r\n");
    }
}

TEST(EngineTrailers, AStreamCutShortByTheDrainSendsNone) {
    ServerConfig config;
    config.timeouts.drain_ms = 30'000;
    EngineHarness h(config, [](Exchange& ex) {
        rivet::Response res;
        res.trailer("known", "early");  // announced, but the body never ends
        res.stream(
            [](std::string& out, const rivet::StreamWaker&) {
                out = "open";
                return rivet::StreamStatus::Waiting;
            },
            "text/plain");
        ex.respond(app::view_of(res));
    });
    auto c = h.connect();
    c->send(get("/s"));
    ASSERT_TRUE(c->read_until("open\r\n"));
    h.io().begin_drain();
    ASSERT_TRUE(c->wait_eof(5000ms));
    auto got = parse_responses(c->received());
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].field("Trailer"), "known");
    EXPECT_EQ(got[0].body, "open");
    EXPECT_EQ(got[0].trailers, "");
    EXPECT_TRUE(got[0].raw.ends_with("\r\n0\r\n\r\n"));
}

}  // namespace
}  // namespace rivet::engine::testing
