// Http2Session's bodies with a real HTTP/2 client (h2_client.hpp): a streamed request body pulled
// piece by piece, its stream window the backpressure (the client cannot send more than the
// window before the handler takes bytes); an answer whose producer waits until woken; and the
// server-wide body budget (a buffered body past it is held, unconsumed, until there is room).
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine_harness.hpp"
#include "h2_client.hpp"

namespace rivet::engine::testing {
namespace {

std::string pattern(size_t n) {
    std::string s(n, ' ');
    for (size_t i = 0; i < n; ++i) s[i] = char('a' + (i * 7 + i / 251) % 26);
    return s;
}

// A handler's pull of a streamed body, one piece per ask(), each asked for by the test.
struct StepPull : std::enable_shared_from_this<StepPull> {
    BodySource source;
    Deferred answer;
    std::mutex mu;
    std::string got;
    size_t pieces = 0;
    size_t largest = 0;
    bool ended = false;
    int error = -1;

    void ask() {
        source.next([self = shared_from_this()](const BodyPiece& p) { self->on_piece(p); });
    }
    void on_piece(const BodyPiece& p) {
        std::lock_guard lock(mu);
        if (p.kind == BodyPiece::Kind::Data) {
            got.append(p.bytes);
            ++pieces;
            largest = std::max(largest, p.bytes.size());
        } else if (p.kind == BodyPiece::Kind::End) {
            ended = true;
            answer.complete(app::reply_of(reply(std::to_string(got.size()) + " bytes")));
        } else {
            error = p.status;
        }
    }
    size_t taken() {
        std::lock_guard lock(mu);
        return got.size();
    }
    size_t piece_count() {
        std::lock_guard lock(mu);
        return pieces;
    }
    bool done() {
        std::lock_guard lock(mu);
        return ended || error >= 0;
    }
};

TEST(EngineHttp2Body, AStreamedBodyIsPulledWithTheWindowAsBackpressure) {
    constexpr uint32_t kWindow = 32 * 1024;
    ServerConfig config;
    config.http2.stream_window = kWindow;
    std::mutex mu;
    std::shared_ptr<StepPull> pull;
    EngineHarness h(
        config,
        [&](Exchange& ex) {
            auto p = std::make_shared<StepPull>();
            p->source = ex.source();
            p->answer = ex.defer();
            std::lock_guard lock(mu);
            pull = p;
        },
        [](const http::RequestHead&, BodyPlan& plan) { plan.mode = BodyPlan::Mode::Streamed; });
    auto c = h.connect();
    H2Client client(*c);
    const std::string body = pattern(5 * kWindow + 1000);
    // The server's SETTINGS first (INITIAL_WINDOW_SIZE): before them, a client may use the
    // default window of 64 KiB.
    ASSERT_TRUE(client.sync());
    const int32_t id = client.request("POST", "/up", {}, &body);
    H2Stream& s = client.stream(id);
    // Nothing taken yet: the client sends the window's worth and no more. The PING after it
    // comes back once the server has read all of it and sent whatever it had to say.
    ASSERT_TRUE(client.run_until([&] { return s.uploaded == kWindow; }));
    ASSERT_TRUE(client.sync());
    ASSERT_TRUE(h.app().wait_served(1));
    EXPECT_EQ(s.uploaded, size_t(kWindow));
    EXPECT_EQ(nghttp2_session_get_stream_remote_window_size(client.ng(), id), 0);
    std::shared_ptr<StepPull> p;
    {
        std::lock_guard lock(mu);
        p = pull;
    }
    ASSERT_TRUE(p);
    // Piece by piece: each take gives its bytes' window back, never more.
    int steps = 0;
    while (!p->done() && steps++ < 1000) {
        const size_t before = p->piece_count();
        h.io().loop().post([p] { p->ask(); });
        ASSERT_TRUE(client.run_until([&] { return p->piece_count() > before || p->done(); }));
        ASSERT_TRUE(client.sync());
        EXPECT_LE(s.uploaded, p->taken() + kWindow) << "sent past the window at step " << steps;
    }
    ASSERT_TRUE(client.finish(id));
    EXPECT_EQ(s.status, 200);
    EXPECT_EQ(s.body, std::to_string(body.size()) + " bytes");
    // The source is the loop's to drop (it is used on the loop's thread only).
    h.io().loop().post([p] { p->source = {}; });
    ASSERT_TRUE(h.sync());
    std::lock_guard lock(p->mu);
    EXPECT_TRUE(p->got == body) << "the body pulled differs (" << p->got.size() << " bytes)";
    EXPECT_LE(p->largest, size_t(kWindow));
    EXPECT_GT(p->pieces, 5u);  // it came as the window let it, not at once
    EXPECT_EQ(p->error, -1);
}

TEST(EngineHttp2Body, AResetStreamFailsTheBodyItsHandlerWaitsFor) {
    std::mutex mu;
    std::shared_ptr<StepPull> pull;
    EngineHarness h(
        {},
        [&](Exchange& ex) {
            if (ex.head().path != "/up") return ex.respond_simple(200, "other\n");
            auto p = std::make_shared<StepPull>();
            p->source = ex.source();
            p->answer = ex.defer();
            p->ask();
            std::lock_guard lock(mu);
            pull = p;
        },
        [](const http::RequestHead&, BodyPlan& plan) { plan.mode = BodyPlan::Mode::Streamed; });
    auto c = h.connect();
    H2Client client(*c);
    const std::string body = pattern(1000);
    const int32_t id = client.request("POST", "/up", {}, &body, true);
    ASSERT_TRUE(client.sync());
    ASSERT_TRUE(h.app().wait_served(1));
    std::shared_ptr<StepPull> p;
    {
        std::lock_guard lock(mu);
        p = pull;
    }
    ASSERT_TRUE(p);
    EXPECT_FALSE(p->done());  // it waits for the first piece
    client.reset(id);
    ASSERT_TRUE(client.run_until([&] { return p->done(); }));
    {
        std::lock_guard lock(p->mu);
        EXPECT_FALSE(p->ended);
        EXPECT_GE(p->error, 0);  // an error piece, not the end of the body
    }
    const int32_t other = client.request("GET", "/other");
    ASSERT_TRUE(client.finish(other));
    EXPECT_EQ(client.stream(other).body, "other\n");
    h.io().loop().post([p] { p->source = {}; });
    ASSERT_TRUE(h.sync());
}

TEST(EngineHttp2Body, AnAnswerBeforeTheBodyEndsResetsTheRestWithNoError) {
    constexpr uint32_t kWindow = 16 * 1024;
    ServerConfig config;
    config.http2.stream_window = kWindow;
    EngineHarness h(
        config, [](Exchange& ex) { ex.respond_simple(200, "early\n"); },
        [](const http::RequestHead&, BodyPlan& plan) { plan.mode = BodyPlan::Mode::Streamed; });
    auto c = h.connect();
    H2Client client(*c);
    ASSERT_TRUE(client.sync());
    const std::string body = pattern(10 * kWindow);
    const int32_t id = client.request("POST", "/up", {}, &body);
    ASSERT_TRUE(client.finish(id));
    const H2Stream& s = client.stream(id);
    EXPECT_EQ(s.status, 200);
    EXPECT_EQ(s.body, "early\n");
    EXPECT_TRUE(s.ended);
    // RFC 9113 §8.1: the server may end the request with RST_STREAM NO_ERROR after a complete
    // answer; the client stops sending, and never past the window.
    EXPECT_TRUE(s.reset_by_server);
    EXPECT_EQ(s.reset_code, uint32_t(NGHTTP2_NO_ERROR));
    EXPECT_LE(s.uploaded, size_t(kWindow));
    const int32_t after = client.request("GET", "/after");
    ASSERT_TRUE(client.finish(after));
    EXPECT_EQ(client.stream(after).body, "early\n");
    EXPECT_FALSE(client.goaway());
}

// A producer that hands over what the test pushed, and says Waiting until it is told the end.
struct Feed {
    std::mutex mu;
    std::string ready;
    bool done = false;
    StreamWaker waker;
    std::atomic<int> calls{0};

    std::shared_ptr<StreamProducer> producer(const std::shared_ptr<Feed>& self) {
        return std::make_shared<StreamProducer>([self](std::string& out, const StreamWaker& w) {
            ++self->calls;
            std::lock_guard lock(self->mu);
            self->waker = w;
            out.swap(self->ready);
            return self->done ? Produced::Done : Produced::Waiting;
        });
    }
    void push(std::string_view piece, bool last) {
        StreamWaker w;
        {
            std::lock_guard lock(mu);
            ready += piece;
            done = last;
            w = waker;
        }
        w.wake();
    }
};

TEST(EngineHttp2Body, AWaitingProducerIsResumedByItsWaker) {
    auto feed = std::make_shared<Feed>();
    feed->ready = "first ";
    EngineHarness h({}, [&](Exchange& ex) {
        if (ex.head().path != "/stream") return ex.respond_simple(200, "other\n");
        ReplyView v;
        v.head.status = 200;
        v.head.content_type = "text/plain";
        v.head.body_kind = http::ResponseHead::Body::Streamed;
        v.stream = feed->producer(feed);
        ex.respond(v);
    });
    auto c = h.connect();
    H2Client client(*c);
    const int32_t id = client.request("GET", "/stream");
    H2Stream& s = client.stream(id);
    ASSERT_TRUE(client.run_until([&] { return s.body == "first "; }));
    // While it waits, the connection's other streams are served and it is not called again.
    const int32_t other = client.request("GET", "/other");
    ASSERT_TRUE(client.finish(other));
    EXPECT_EQ(client.stream(other).body, "other\n");
    EXPECT_EQ(feed->calls.load(), 1);
    EXPECT_FALSE(s.ended);
    feed->push("second ", false);
    ASSERT_TRUE(client.run_until([&] { return s.body == "first second "; }));
    EXPECT_EQ(feed->calls.load(), 2);
    feed->push("last", true);
    ASSERT_TRUE(client.finish(id));
    EXPECT_EQ(s.body, "first second last");
    EXPECT_TRUE(s.ended);
    EXPECT_EQ(s.close_code, uint32_t(NGHTTP2_NO_ERROR));
    EXPECT_EQ(feed->calls.load(), 3);
}

TEST(EngineHttp2Body, ABufferedBodyPastTheBudgetWaitsUnconsumedThenIsAdmitted) {
    // Bodies larger than the stream window: one fits the budget, two do not.
    constexpr uint32_t kWindow = 16 * 1024;
    constexpr size_t kBody = 80 * 1024;
    ServerConfig config;
    config.http2.stream_window = kWindow;
    config.limits.max_buffered_bodies = 100 * 1024;
    EngineHarness h(config, [](Exchange& ex) {
        ex.respond_simple(200, std::to_string(ex.body().size()) + "\n");
    });
    auto first_socket = h.connect();
    auto second_socket = h.connect();
    H2Client first(*first_socket), second(*second_socket);
    ASSERT_TRUE(first.sync());  // the server's SETTINGS (its window) are known
    ASSERT_TRUE(second.sync());
    const std::string body_a(kBody, 'a'), body_b(kBody, 'b');
    const H2Fields length{{"content-length", std::to_string(kBody)}};
    // Each head leaves alone, its body held: the first takes the budget, the second waits.
    const int32_t a = first.request("POST", "/a", length, &body_a, true);
    ASSERT_TRUE(first.sync());
    const int32_t b = second.request("POST", "/b", length, &body_b, true);
    ASSERT_TRUE(second.sync());
    ASSERT_TRUE(h.sync());
    EXPECT_EQ(h.io().budget().held(), kBody);
    EXPECT_EQ(h.io().stats().bodies_waiting.load(), 1u);
    // The waiting body is sent: a window's worth arrives and is kept, not consumed (no more
    // can come) and not served.
    second.release(b);
    ASSERT_TRUE(second.run_until([&] { return second.stream(b).uploaded == kWindow; }));
    ASSERT_TRUE(second.sync());
    EXPECT_EQ(second.stream(b).uploaded, size_t(kWindow));
    EXPECT_EQ(nghttp2_session_get_stream_remote_window_size(second.ng(), b), 0);
    EXPECT_FALSE(h.app().wait_served(1, 0ms));
    // The first body completes and is served; its budget goes back, the second is admitted.
    first.release(a);
    ASSERT_TRUE(first.finish(a));
    EXPECT_EQ(first.stream(a).body, std::to_string(kBody) + "\n");
    ASSERT_TRUE(second.finish(b));
    EXPECT_EQ(second.stream(b).status, 200);
    EXPECT_EQ(second.stream(b).body, std::to_string(kBody) + "\n");
    auto bodies = h.app().bodies();
    EXPECT_TRUE(bodies == (std::vector<std::string>{body_a, body_b})) << "bodies differ";
    EXPECT_EQ(h.io().budget().held(), 0u);
    EXPECT_EQ(h.io().stats().bodies_waiting.load(), 0u);
}

TEST(EngineHttp2Body, ABodyThatArrivesWholeWithinTheWindowStillWaitsForTheBudget) {
    // Smaller than the window: all of it (and END_STREAM) can arrive while it waits, and it is
    // still not served before its budget is reserved.
    constexpr size_t kBody = 900;
    ServerConfig config;
    config.limits.max_buffered_bodies = 1000;
    EngineHarness h(config, [](Exchange& ex) {
        ex.respond_simple(200, std::to_string(ex.body().size()) + "\n");
    });
    auto first_socket = h.connect();
    auto second_socket = h.connect();
    H2Client first(*first_socket), second(*second_socket);
    ASSERT_TRUE(first.sync());
    ASSERT_TRUE(second.sync());
    const std::string body_a(kBody, 'a'), body_b(kBody, 'b');
    const H2Fields length{{"content-length", std::to_string(kBody)}};
    const int32_t a = first.request("POST", "/a", length, &body_a, true);
    ASSERT_TRUE(first.sync());
    const int32_t b = second.request("POST", "/b", length, &body_b, true);
    ASSERT_TRUE(second.sync());
    ASSERT_TRUE(h.sync());
    EXPECT_EQ(h.io().budget().held(), kBody);
    second.release(b);
    ASSERT_TRUE(second.run_until([&] { return second.stream(b).uploaded == kBody; }));
    ASSERT_TRUE(second.sync());
    ASSERT_TRUE(h.sync());
    EXPECT_FALSE(h.app().wait_served(1, 0ms)) << "served past the budget";
    EXPECT_EQ(h.io().budget().held(), kBody);
    first.release(a);
    ASSERT_TRUE(first.finish(a));
    ASSERT_TRUE(second.finish(b));
    EXPECT_EQ(second.stream(b).body, std::to_string(kBody) + "\n");
    EXPECT_EQ(h.io().budget().held(), 0u);
}

}  // namespace
}  // namespace rivet::engine::testing
