// Streamed request bodies: serve() runs after the head, the handler pulls the body through a
// BodySource (pieces in order, then the end or an error), the engine reads only while it is
// asked, and the connection goes on with the requests after the body.
#include <gtest/gtest.h>

#include <sys/socket.h>

#include <atomic>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine_harness.hpp"

namespace rivet::engine::testing {
namespace {

void stream_all(const http::RequestHead&, BodyPlan& plan) {
    plan.mode = BodyPlan::Mode::Streamed;
}

// What the pulls of one test saw, for the test's thread.
struct Seen {
    std::mutex mu;
    std::vector<std::string> pieces;
    std::vector<int> errors;  // BodyPiece::status of each error heard
    int ends = 0;

    void add(const BodyPiece& p) {
        std::lock_guard lock(mu);
        if (p.kind == BodyPiece::Kind::Data) pieces.emplace_back(p.bytes);
        if (p.kind == BodyPiece::Kind::End) ++ends;
        if (p.kind == BodyPiece::Kind::Error) errors.push_back(p.status);
    }
    size_t piece_count() {
        std::lock_guard lock(mu);
        return pieces.size();
    }
    int end_count() {
        std::lock_guard lock(mu);
        return ends;
    }
    std::string joined() {
        std::lock_guard lock(mu);
        return joined_locked();
    }
    std::string joined_locked() {
        std::string all;
        for (auto& p : pieces) all += p;
        return all;
    }
};

// Pulls a whole body, then answers (deferred) with what it read.
struct Pull : std::enable_shared_from_this<Pull> {
    BodySource source;
    Deferred answer;
    std::string got;
    std::shared_ptr<Seen> seen;

    void ask() {
        source.next([self = shared_from_this()](const BodyPiece& p) { self->on_piece(p); });
    }
    void on_piece(const BodyPiece& p) {
        seen->add(p);
        if (p.kind == BodyPiece::Kind::Data) {
            got.append(p.bytes);
            return ask();
        }
        if (p.kind == BodyPiece::Kind::End) answer.complete(app::reply_of(reply(got)));
        // An error: the engine answered in the handler's place (or the connection is gone).
    }
};

// A handler that defers and pulls the whole body (`start`: at once, or not before the test
// says so through `parked`).
TestApp::Handler puller(std::shared_ptr<Seen> seen, bool start = true,
                        std::shared_ptr<std::vector<std::shared_ptr<Pull>>> parked = nullptr) {
    return [seen, start, parked](Exchange& ex) {
        auto pull = std::make_shared<Pull>();
        pull->source = ex.source();
        pull->answer = ex.defer();
        pull->seen = seen;
        if (start) pull->ask();
        if (parked) parked->push_back(pull);
    };
}

std::string pattern(size_t n) {
    std::string s(n, ' ');
    for (size_t i = 0; i < n; ++i) s[i] = char('a' + (i * 7 + i / 251) % 26);
    return s;
}

TEST(EngineStreamedBody, ContentLengthBodyArrivesInOrderByteExact) {
    auto seen = std::make_shared<Seen>();
    EngineHarness h({}, puller(seen), stream_all);
    auto c = h.connect();
    std::string body = pattern(300 * 1024);
    c->send_in_pieces(request("POST", "/up", "", body), 10'000, 1ms);
    auto got = c->read_responses(1, 5000ms);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].status, 200);
    EXPECT_TRUE(got[0].body == body) << "echo of " << got[0].body.size() << " bytes differs";
    EXPECT_TRUE(seen->joined() == body);
    EXPECT_GT(seen->piece_count(), 1u);  // it came in pieces, as it arrived
    EXPECT_EQ(seen->end_count(), 1);
    EXPECT_EQ(h.app().bodies(), std::vector<std::string>{""});  // nothing buffered
}

TEST(EngineStreamedBody, ChunkedBodyIsDeChunkedInOneByteWrites) {
    auto seen = std::make_shared<Seen>();
    EngineHarness h({}, puller(seen), stream_all);
    auto c = h.connect();
    std::string r =
        "POST /c HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
        "5\r\nhello\r\n1;ext=1\r\n,\r\na\r\n0123456789\r\n0\r\nTrailer: x\r\n\r\n";
    c->send_in_pieces(r, 1, 0ms);
    auto got = c->read_responses(1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].body, "hello,0123456789");
    EXPECT_EQ(seen->end_count(), 1);
}

TEST(EngineStreamedBody, ContentLengthBodyInOneByteWrites) {
    auto seen = std::make_shared<Seen>();
    EngineHarness h({}, puller(seen), stream_all);
    auto c = h.connect();
    std::string body = pattern(300);
    c->send_in_pieces(request("POST", "/b", "", body), 1, 0ms);
    auto got = c->read_responses(1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].body, body);
}

TEST(EngineStreamedBody, RequestsAfterAStreamedBodyAreAnsweredInOrder) {
    auto seen = std::make_shared<Seen>();
    EngineHarness h(
        {},
        [seen](Exchange& ex) {
            if (ex.head().method == http::Method::Get) {
                return ex.respond_simple(200, "get " + std::string(ex.head().target));
            }
            puller(seen)(ex);
        },
        stream_all);
    auto c = h.connect();
    // All in one write: the body's end and the next requests arrive with its head.
    c->send(
        get("/1") + request("POST", "/2", "", "streamed") +
        "POST /3 HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n" +
        get("/4"));
    auto got = c->read_responses(4);
    ASSERT_EQ(got.size(), 4u);
    EXPECT_EQ(got[0].body, "get /1");
    EXPECT_EQ(got[1].body, "streamed");
    EXPECT_EQ(got[2].body, "abc");
    EXPECT_EQ(got[3].body, "get /4");
    EXPECT_EQ(got[3].field("Connection"), "");  // still kept alive
}

TEST(EngineStreamedBody, AHandlerThatDoesNotAskStallsTheClient) {
    auto seen = std::make_shared<Seen>();
    auto parked = std::make_shared<std::vector<std::shared_ptr<Pull>>>();
    EngineHarness h({}, puller(seen, false, parked), stream_all);
    auto c = h.connect();
    std::string body = pattern(8 * 1024 * 1024);
    std::string all = request("POST", "/slow", "", body);
    // The client writes until its socket is full; the engine reads the head and no more.
    size_t sent = 0;
    for (;;) {
        ssize_t n = ::send(c->fd(), all.data() + sent, all.size() - sent, MSG_DONTWAIT);
        if (n <= 0) break;
        sent += size_t(n);
    }
    ASSERT_TRUE(h.app().wait_served(1));
    std::this_thread::sleep_for(50ms);
    ASSERT_TRUE(h.sync());
    const uint64_t read = h.io().stats().bytes_in.load();
    EXPECT_LT(read, 2 * IoThread::kReadBufferSize) << "the engine read without being asked";
    EXPECT_LT(sent, all.size());
    // Now the handler asks: the rest flows, in order, while the client keeps writing.
    ASSERT_EQ(parked->size(), 1u);
    h.io().loop().post([parked] { (*parked)[0]->ask(); });
    std::thread rest([&] { c->send(std::string_view(all).substr(sent)); });
    auto got = c->read_responses(1, 10'000ms);
    rest.join();
    ASSERT_EQ(got.size(), 1u);
    EXPECT_TRUE(got[0].body == body) << "echo of " << got[0].body.size() << " bytes differs";
    h.io().loop().post([parked] { parked->clear(); });
    ASSERT_TRUE(h.sync());
}

TEST(EngineStreamedBody, APeerResetMidBodyIsHeardByTheWaitingHandler) {
    auto seen = std::make_shared<Seen>();
    EngineHarness h({}, puller(seen), stream_all);
    auto c = h.connect();
    c->send("POST /r HTTP/1.1\r\nHost: t\r\nContent-Length: 1000\r\n\r\n" + std::string(300, 'x'));
    for (int i = 0; i < 100 && seen->joined().size() < 300; ++i) std::this_thread::sleep_for(5ms);
    linger hard{1, 0};  // close with a reset
    setsockopt(c->fd(), SOL_SOCKET, SO_LINGER, &hard, sizeof hard);
    c.reset();
    for (int i = 0; i < 200; ++i) {
        {
            std::lock_guard lock(seen->mu);
            if (!seen->errors.empty()) break;
        }
        std::this_thread::sleep_for(5ms);
    }
    std::lock_guard lock(seen->mu);
    EXPECT_EQ(seen->errors, std::vector<int>{0});  // 0: the connection is gone
    EXPECT_EQ(seen->ends, 0);
}

TEST(EngineStreamedBody, AClientThatStopsSendingAnAskedBodyTimesOut) {
    auto seen = std::make_shared<Seen>();
    ServerConfig config;
    config.timeouts.body_ms = 100;
    EngineHarness h(config, puller(seen), stream_all);
    auto c = h.connect();
    c->send("POST /t HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\nabc");
    EXPECT_TRUE(c->wait_eof(3000ms));
    for (int i = 0; i < 200; ++i) {
        {
            std::lock_guard lock(seen->mu);
            if (!seen->errors.empty()) break;
        }
        std::this_thread::sleep_for(5ms);
    }
    std::lock_guard lock(seen->mu);
    EXPECT_EQ(seen->errors, std::vector<int>{408});  // the handler hears why
    EXPECT_EQ(seen->joined_locked(), "abc");
}

TEST(EngineStreamedBody, MalformedChunkingIsRefusedInTheHandlersPlace) {
    auto seen = std::make_shared<Seen>();
    EngineHarness h({}, puller(seen), stream_all);
    auto c = h.connect();
    c->send("POST /m HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\nzz\r\n");
    auto got = c->read_responses(1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].status, 400);
    EXPECT_TRUE(c->wait_eof());
    std::lock_guard lock(seen->mu);
    EXPECT_EQ(seen->errors, std::vector<int>{400});
    EXPECT_EQ(h.app().protocol_errors(), std::vector<int>{400});
}

TEST(EngineStreamedBody, ChunkedOverThePlannedLimitIs413MidBody) {
    auto seen = std::make_shared<Seen>();
    EngineHarness h({}, puller(seen), [](const http::RequestHead&, BodyPlan& plan) {
        plan.mode = BodyPlan::Mode::Streamed;
        plan.limit = 8;
    });
    auto c = h.connect();
    c->send("POST /m HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n");
    for (int i = 0; i < 100 && seen->joined() != "hello"; ++i) std::this_thread::sleep_for(5ms);
    EXPECT_EQ(seen->joined(), "hello");
    c->send("5\r\nworld\r\n");
    auto got = c->read_responses(1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].status, 413);
    std::lock_guard lock(seen->mu);
    EXPECT_EQ(seen->errors, std::vector<int>{413});
}

TEST(EngineStreamedBody, AnAnswerBeforeTheBodyEndsClosesTheConnection) {
    auto source = std::make_shared<BodySource>();
    EngineHarness h(
        {},
        [source](Exchange& ex) {
            *source = ex.source();
            ex.respond_simple(403, "no\n");
        },
        stream_all);
    auto c = h.connect();
    c->send("POST /x HTTP/1.1\r\nHost: t\r\nContent-Length: 100000\r\n\r\n" + std::string(10, 'x'));
    auto got = c->read_responses(1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].status, 403);
    EXPECT_EQ(got[0].field("Connection"), "close");
    c->send(std::string(50'000, 'y'));  // the rest is dropped while the close lingers
    EXPECT_TRUE(c->wait_eof(3000ms));
    // The kept handle says the body is over; it does not crash.
    std::promise<BodyPiece> heard, called_back;
    h.io().loop().post([source, &heard, &called_back] {
        BodyPiece p;
        EXPECT_TRUE(source->try_next(p));
        heard.set_value(p);
        // Asked again, it answers later (never inside next()) with the same error.
        auto inside = std::make_shared<bool>(true);
        EXPECT_TRUE(source->next([&called_back, inside](const BodyPiece& q) {
            EXPECT_FALSE(*inside);
            called_back.set_value(q);
        }));
        *inside = false;
    });
    auto p = heard.get_future().get();
    EXPECT_EQ(p.kind, BodyPiece::Kind::Error);
    EXPECT_EQ(p.status, 0);
    auto q = called_back.get_future().get();
    EXPECT_EQ(q.kind, BodyPiece::Kind::Error);
    EXPECT_EQ(q.status, 0);
    ASSERT_TRUE(h.sync());
    h.io().loop().post([source] { *source = {}; });
    ASSERT_TRUE(h.sync());
}

TEST(EngineStreamedBody, ExpectContinueIsAnsweredWhenTheHandlerAsks) {
    auto seen = std::make_shared<Seen>();
    auto parked = std::make_shared<std::vector<std::shared_ptr<Pull>>>();
    EngineHarness h({}, puller(seen, false, parked), stream_all);
    auto c = h.connect();
    c->send("POST /e HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n");
    ASSERT_TRUE(h.app().wait_served(1));
    EXPECT_EQ(c->read_for(50ms), "");  // not asked yet: no 100
    h.io().loop().post([parked] { (*parked)[0]->ask(); });
    ASSERT_TRUE(c->read_until("100 Continue"));
    c->send("hello");
    auto got = c->read_responses(2);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[1].body, "hello");
    h.io().loop().post([parked] { parked->clear(); });
    ASSERT_TRUE(h.sync());
}

TEST(EngineStreamedBody, TryNextHandsOverWhatIsBufferedWithoutWaiting) {
    auto got_body = std::make_shared<std::string>();
    auto parked = std::make_shared<BodySource>();
    auto answer = std::make_shared<Deferred>();
    EngineHarness h(
        {},
        [&](Exchange& ex) {
            if (!ex.streamed()) return ex.respond_simple(200, "GET /after body=");
            *parked = ex.source();
            *answer = ex.defer();
        },
        [](const http::RequestHead& head, BodyPlan& plan) {
            if (head.method == http::Method::Post) plan.mode = BodyPlan::Mode::Streamed;
        });
    auto c = h.connect();
    c->send(request("POST", "/t", "", "abcdef") + get("/after"));
    ASSERT_TRUE(h.app().wait_served(1));
    ASSERT_TRUE(h.sync());
    std::promise<void> done;
    h.io().loop().post([&] {
        BodyPiece p;
        while (parked->try_next(p) && p.kind == BodyPiece::Kind::Data) got_body->append(p.bytes);
        EXPECT_EQ(p.kind, BodyPiece::Kind::End);
        answer->complete(app::reply_of(reply(*got_body)));
        *parked = {};
        done.set_value();
    });
    done.get_future().wait();
    auto got = c->read_responses(2);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0].body, "abcdef");
    EXPECT_EQ(got[1].body, "GET /after body=");
}

}  // namespace
}  // namespace rivet::engine::testing
