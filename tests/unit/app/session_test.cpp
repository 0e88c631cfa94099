// The parts of sessions that need no socket: signatures, sealing, base64url, the cookie encodings,
// and the memory store's bound and expiry. tests/e2e/test_sessions.py drives the middleware.
#include <rivet/session.hpp>

#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <thread>

#include "app/session/sealer.hpp"
#include "app/session/session_engine.hpp"
#include "app/session/signer.hpp"

namespace {

using namespace std::chrono_literals;
using rivet::app::base64url_decode;
using rivet::app::base64url_encode;
using rivet::app::Signer;

const std::string kSecret(32, 'k');

TEST(Base64Url, RoundTripsEveryLengthAndRefusesJunk) {
    std::string bytes;
    for (int i = 0; i < 40; ++i) {
        const std::string text = base64url_encode(bytes);
        EXPECT_EQ(text.find_first_of("+/="), std::string::npos);
        EXPECT_EQ(base64url_decode(text), bytes) << i;
        bytes += char(i * 37);
    }
    EXPECT_EQ(base64url_encode("\xfb\xff"), "-_8");
    EXPECT_EQ(base64url_decode("a"), std::nullopt);     // no length gives 1 digit
    EXPECT_EQ(base64url_decode("ab+c"), std::nullopt);  // standard alphabet
    EXPECT_EQ(base64url_decode("ab=="), std::nullopt);  // padding
    EXPECT_EQ(base64url_decode("AB"), std::nullopt);    // leftover bits set: a second spelling
    EXPECT_EQ(base64url_decode("AA"), std::string(1, '\0'));
}

TEST(Signer, VerifiesItsOwnAndRefusesTamperingOtherPurposesAndKeys) {
    const Signer signer(kSecret);
    const std::string token = signer.sign("id", "abc");
    EXPECT_TRUE(token.starts_with("abc."));
    EXPECT_EQ(signer.verify("id", token), "abc");
    EXPECT_EQ(signer.verify("data", token), std::nullopt);
    EXPECT_EQ(Signer(std::string(32, 'x')).verify("id", token), std::nullopt);
    for (size_t i = 0; i < token.size(); ++i) {
        std::string tampered = token;
        tampered[i] = tampered[i] == 'A' ? 'B' : 'A';
        EXPECT_EQ(signer.verify("id", tampered), std::nullopt) << i;
    }
    EXPECT_EQ(signer.verify("id", "abc"), std::nullopt);
    EXPECT_EQ(signer.verify("id", token.substr(0, token.size() - 1)), std::nullopt);
    EXPECT_THROW(Signer(std::string(31, 'k')), std::invalid_argument);
}

TEST(RandomToken, DiffersEachTime) {
    std::set<std::string> seen;
    for (int i = 0; i < 1000; ++i) seen.insert(rivet::app::random_token(32));
    EXPECT_EQ(seen.size(), 1000u);
    EXPECT_EQ(rivet::app::random_token(32).size(), 43u);
}

TEST(SessionEngine, CookieEncodingRoundTripsAndRefusesTampering) {
    const rivet::detail::SessionEngine engine(
        {.secret = kSecret, .storage = rivet::SessionStorage::InCookie});
    const auto now = std::chrono::system_clock::time_point(1'700'000'000'123ms);
    const rivet::SessionRecord record{
        {{"user", "ada"}, {"x", "a \"quoted\"; value"}}, now, now + 5s};
    const std::string value = engine.encode(record);
    auto back = engine.decode(value);
    ASSERT_TRUE(back);
    EXPECT_EQ(back->data, record.data);
    EXPECT_EQ(back->created, record.created);
    EXPECT_EQ(back->last_seen, record.last_seen);
    std::string tampered = value;
    tampered[3] = tampered[3] == 'e' ? 'f' : 'e';
    EXPECT_FALSE(engine.decode(tampered));
    // A session id's signature does not pass for data, nor data's for an id.
    EXPECT_FALSE(engine.decode(engine.signed_id(base64url_encode("{}"))));
    EXPECT_FALSE(engine.verified_id(value));
    EXPECT_TRUE(engine.expired(record, record.last_seen + 30min));  // idle_timeout's default
    EXPECT_FALSE(engine.expired(record, record.last_seen + 29min));
    EXPECT_TRUE(engine.expired({{}, now, now + 23h + 50min}, now + 24h));
}

TEST(Sealer, OpensItsOwnAndNothingElse) {
    const rivet::app::Sealer sealer(kSecret);
    const std::string plaintext = "{\"user\":\"ada\"}";
    const std::string sealed = sealer.seal("data", plaintext);
    EXPECT_EQ(sealed.find("ada"), std::string::npos);
    EXPECT_EQ(sealed.find_first_of("+/=.;, \""), std::string::npos);  // cookie-octets
    EXPECT_EQ(sealer.open("data", sealed), plaintext);
    // Every value gets its own salt, so the same data never seals to the same text.
    EXPECT_NE(sealer.seal("data", plaintext), sealed);
    EXPECT_EQ(sealer.open("id", sealed), std::nullopt);
    EXPECT_EQ(rivet::app::Sealer(std::string(32, 'x')).open("data", sealed), std::nullopt);
    // A change to any byte of the raw value (version, salt, ciphertext, tag) is refused.
    const std::string raw = *base64url_decode(sealed);
    for (size_t i = 0; i < raw.size(); ++i) {
        std::string changed = raw;
        changed[i] = char(changed[i] ^ 0x01);
        EXPECT_EQ(sealer.open("data", base64url_encode(changed)), std::nullopt) << i;
    }
    EXPECT_EQ(sealer.open("data", base64url_encode(raw.substr(0, raw.size() - 1))), std::nullopt);
    EXPECT_EQ(sealer.open("data", base64url_encode(raw.substr(0, 33))), std::nullopt);
    for (std::string_view junk : {"", "a", "abc.def", "!!!!"})
        EXPECT_EQ(sealer.open("data", junk), std::nullopt) << junk;
    EXPECT_EQ(sealer.open("data", sealer.seal("data", "")), "");
    EXPECT_THROW(rivet::app::Sealer(std::string(31, 'k')), std::invalid_argument);
}

TEST(SessionEngine, EncryptedCookieRoundTripsHidesTheDataAndRefusesSignedOnes) {
    const rivet::detail::SessionEngine engine(
        {.secret = kSecret, .storage = rivet::SessionStorage::InEncryptedCookie});
    const rivet::detail::SessionEngine signed_only(
        {.secret = kSecret, .storage = rivet::SessionStorage::InCookie});
    const auto now = std::chrono::system_clock::time_point(1'700'000'000'123ms);
    const rivet::SessionRecord record{{{"user", "ada"}}, now, now + 5s};
    const std::string value = engine.encode(record);
    auto back = engine.decode(value);
    ASSERT_TRUE(back);
    EXPECT_EQ(back->data, record.data);
    EXPECT_EQ(back->created, record.created);
    EXPECT_EQ(back->last_seen, record.last_seen);
    // Unlike the signed cookie, nothing of the data can be read from it.
    const auto raw = base64url_decode(value);
    ASSERT_TRUE(raw);
    EXPECT_EQ(raw->find("ada"), std::string::npos);
    const std::string signed_value = signed_only.encode(record);
    EXPECT_NE(base64url_decode(signed_value.substr(0, signed_value.rfind('.')))->find("ada"),
              std::string::npos);
    // One kind is never taken for the other, with the same secret.
    EXPECT_FALSE(engine.decode(signed_only.encode(record)));
    EXPECT_FALSE(signed_only.decode(value));
    EXPECT_FALSE(engine.verified_id(value));
    EXPECT_TRUE(engine.in_cookie() && signed_only.in_cookie());
    // The size Session::set checks is the size sent, for every length of data, both kinds.
    for (size_t n = 0; n < 40; ++n) {
        const rivet::SessionRecord r{{{"k", std::string(n, 'v')}}, now, now};
        EXPECT_EQ(engine.encoded_size(r), engine.encode(r).size()) << n;
        EXPECT_EQ(signed_only.encoded_size(r), signed_only.encode(r).size()) << n;
    }
    EXPECT_FALSE(rivet::detail::SessionEngine({.secret = kSecret}).in_cookie());
}

TEST(SessionEngine, ATokenOnlyCookieCarriesTheTokenAndWhenItWasMade) {
    const rivet::detail::SessionEngine engine({.secret = kSecret});
    const auto made = std::chrono::system_clock::time_point(1'700'000'000'123ms);
    const auto now = made + 1h;
    const std::string value = engine.signed_token("tok", made);
    auto record = engine.verified_token(value, now);
    ASSERT_TRUE(record);
    EXPECT_EQ(record->data,
              (rivet::SessionData{{std::string(rivet::detail::kCsrfSessionKey), "tok"}}));
    EXPECT_TRUE(rivet::detail::SessionEngine::only_token(record->data));
    EXPECT_EQ(record->created, made);
    EXPECT_EQ(record->last_seen, now);                 // idle never ends it...
    EXPECT_TRUE(engine.expired(*record, made + 24h));  // ...absolute_timeout does
    // Neither a session id nor cookie data, nor the reverse; no changed byte passes.
    EXPECT_FALSE(engine.verified_id(value));
    EXPECT_FALSE(engine.verified_token(engine.signed_id("tok~1"), now));
    for (size_t i = 0; i < value.size(); ++i) {
        std::string tampered = value;
        tampered[i] = tampered[i] == 'A' ? 'B' : 'A';
        EXPECT_FALSE(engine.verified_token(tampered, now)) << i;
    }
    const rivet::app::Signer signer(kSecret);
    for (std::string_view bad : {"tok", "~1", "tok~", "tok~1x", "tok~99999999999999999999"})
        EXPECT_FALSE(engine.verified_token(signer.sign("rivet session csrf token", bad), now))
            << bad;
    EXPECT_FALSE(rivet::detail::SessionEngine::only_token({}));
    EXPECT_FALSE(rivet::detail::SessionEngine::only_token(
        {{std::string(rivet::detail::kCsrfSessionKey), "t"}, {"user", "ada"}}));
}

TEST(SessionEngine, SessionCookieIsSecureOverTlsOrWhenAskedAlways) {
    const rivet::detail::SessionEngine engine({.secret = kSecret});
    const rivet::Cookie plain = engine.cookie("v", false);
    EXPECT_FALSE(plain.secure);
    EXPECT_TRUE(plain.http_only);
    EXPECT_EQ(plain.same_site, rivet::SameSite::Lax);
    EXPECT_EQ(plain.path, "/");
    EXPECT_TRUE(engine.cookie("v", true).secure);
    const rivet::detail::SessionEngine always(
        {.secret = kSecret, .secure = rivet::SecureCookie::Always});
    EXPECT_TRUE(always.cookie("v", false).secure);
}

TEST(SessionEngine, RefusesBadOptions) {
    using rivet::SessionOptions;
    EXPECT_THROW(rivet::detail::SessionEngine({.secret = "short"}), std::invalid_argument);
    EXPECT_THROW(rivet::detail::SessionEngine({.secret = kSecret, .cookie_name = "a b"}),
                 std::invalid_argument);
    EXPECT_THROW(rivet::detail::SessionEngine({.secret = kSecret, .path = "/a;b"}),
                 std::invalid_argument);
    EXPECT_THROW(rivet::detail::SessionEngine({.secret = kSecret, .idle_timeout = 0s}),
                 std::invalid_argument);
    EXPECT_THROW(
        rivet::detail::SessionEngine({.secret = kSecret, .same_site = rivet::SameSite::None}),
        std::invalid_argument);
    EXPECT_NO_THROW(rivet::detail::SessionEngine({.secret = kSecret,
                                                  .same_site = rivet::SameSite::None,
                                                  .secure = rivet::SecureCookie::Always}));
}

rivet::SessionRecord record_with(std::string user) {
    const auto now = std::chrono::system_clock::now();
    return {{{"user", std::move(user)}}, now, now};
}

TEST(MemorySessionStore, EvictsTheLeastRecentlyUsedPastItsBound) {
    auto store = rivet::memory_session_store(3);
    for (std::string id : {"a", "b", "c"}) store->save(id, record_with(id), 1h);
    ASSERT_TRUE(store->load("a"));  // "a" is now the most recently used: "b" goes first
    store->save("d", record_with("d"), 1h);
    EXPECT_FALSE(store->load("b"));
    for (std::string id : {"a", "c", "d"}) {
        auto r = store->load(id);
        ASSERT_TRUE(r) << id;
        EXPECT_EQ(r->data.at("user"), id);
    }
    store->save("a", record_with("again"), 1h);  // an update takes no new place
    EXPECT_TRUE(store->load("c") && store->load("d"));
    EXPECT_EQ(store->load("a")->data.at("user"), "again");
    store->remove("a");
    EXPECT_FALSE(store->load("a"));
    store->remove("never");  // no such id: nothing happens
    EXPECT_THROW(rivet::memory_session_store(0), std::invalid_argument);
}

TEST(MemorySessionStore, DropsASessionPastItsTtl) {
    auto store = rivet::memory_session_store(10);
    store->save("gone", record_with("x"), 0s);
    store->save("kept", record_with("y"), 1h);
    EXPECT_FALSE(store->load("gone"));
    EXPECT_TRUE(store->load("kept"));
}

TEST(MemorySessionStore, SharedByThreadsStaysWithinItsBound) {
    auto store = rivet::memory_session_store(50);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            for (int i = 0; i < 2000; ++i) {
                const std::string id = std::to_string(t) + "-" + std::to_string(i % 100);
                store->save(id, record_with(id), 1h);
                if (auto r = store->load(id)) {
                    EXPECT_EQ(r->data.at("user"), id);
                }
                if (i % 7 == 0) store->remove(id);
            }
        });
    for (auto& t : threads) t.join();
    int kept = 0;
    for (int t = 0; t < 4; ++t)
        for (int i = 0; i < 100; ++i)
            kept += bool(store->load(std::to_string(t) + "-" + std::to_string(i)));
    EXPECT_LE(kept, 50);
    EXPECT_GT(kept, 0);
}

// Runs a task that never suspends (a synchronous store's) to its end, as the framework's
// coroutine would, and gives its value.
template <class T>
T finish(rivet::Task<T> task) {
    auto h = rivet::detail::TaskAccess::release(task);
    struct Frame {  // destroyed however take() ends: it rethrows a failed operation's exception
        decltype(h) handle;
        ~Frame() { handle.destroy(); }
    } frame{h};
    h.resume();
    EXPECT_TRUE(h.done()) << "a synchronous store's operation suspended";
    return h.promise().take();
}

TEST(SessionStoreAdapter, MemoryStoreWorksThroughTheAsynchronousInterface) {
    std::shared_ptr<rivet::AsyncSessionStore> store = rivet::memory_session_store(2);
    EXPECT_EQ(finish(store->load_async("a")), std::nullopt);
    finish(store->save_async("a", record_with("ada"), 1h));
    auto loaded = finish(store->load_async("a"));
    ASSERT_TRUE(loaded);
    EXPECT_EQ(loaded->data.at("user"), "ada");
    // The same store seen both ways: what one side wrote, the other reads.
    auto& sync = dynamic_cast<rivet::SessionStore&>(*store);
    EXPECT_EQ(sync.load("a")->data.at("user"), "ada");
    sync.save("b", record_with("alan"), 1h);
    EXPECT_EQ(finish(store->load_async("b"))->data.at("user"), "alan");
    // Its bound and TTL hold through the adapter too.
    finish(store->save_async("c", record_with("c"), 1h));
    EXPECT_EQ(finish(store->load_async("a")), std::nullopt);  // least recently used: evicted
    finish(store->save_async("gone", record_with("x"), 0s));
    EXPECT_EQ(finish(store->load_async("gone")), std::nullopt);
    finish(store->remove_async("c"));
    EXPECT_EQ(finish(store->load_async("c")), std::nullopt);
}

// A synchronous store that fails: the adapter's task carries the exception to its awaiter.
struct FailingStore final : rivet::SessionStore {
    std::optional<rivet::SessionRecord> load(const std::string&) override {
        throw std::runtime_error("down");
    }
    void save(const std::string&, const rivet::SessionRecord&, std::chrono::seconds) override {
        throw std::runtime_error("down");
    }
    void remove(const std::string&) override { throw std::runtime_error("down"); }
};

TEST(SessionStoreAdapter, ASynchronousStoresFailureReachesTheAwaiter) {
    FailingStore store;
    EXPECT_THROW(finish(store.load_async("a")), std::runtime_error);
    EXPECT_THROW(finish(store.save_async("a", record_with("x"), 1h)), std::runtime_error);
    EXPECT_THROW(finish(store.remove_async("a")), std::runtime_error);
}

TEST(SessionRecordText, RoundTripsAndRefusesWhatIsNoRecord) {
    const auto record = record_with("ada \"quoted\" \n");
    const auto back = rivet::detail::record_from_text(rivet::detail::record_text(record));
    ASSERT_TRUE(back);
    EXPECT_EQ(back->data, record.data);
    EXPECT_EQ(std::chrono::floor<std::chrono::milliseconds>(back->created),
              std::chrono::floor<std::chrono::milliseconds>(record.created));
    for (const char* junk :
         {"", "null", "[]", "{\"d\":{},\"c\":1}", "{\"d\":{\"k\":1},\"c\":1,\"s\":1}", "not json"})
        EXPECT_EQ(rivet::detail::record_from_text(junk), std::nullopt) << junk;
}

}  // namespace
