// rivet::sessions(): per-visitor data behind a signed cookie (HMAC-SHA256).
//
//   app.use(rivet::sessions({.secret = secret_of_32_bytes_or_more}));
//   ... in a handler:
//   rivet::Session& session = rivet::session(req);
//   if (auto user = session.get("user")) res.text("hello " + *user);
//   session.regenerate();             // on login: a new id, so a planted one is worth nothing
//   session.set("user", "ada");
//   session.destroy();                // on logout
//
// Storage (SessionOptions::storage): InStore keeps the data in a store (by default one in
// memory, per process, shared by the I/O loops; or redis_session_store(), shared by every
// instance) and gives the browser only a random id, signed; InCookie keeps the data in the
// cookie itself, signed (not encrypted: the visitor can read it, not change it);
// InEncryptedCookie keeps it in the cookie encrypted and authenticated (AES-256-GCM under a key
// derived from the secret for each cookie: the visitor can neither read nor change it). Both
// cookie kinds are limited to SessionOptions::max_cookie_bytes.
//
// A session is made (stored, its cookie sent) only when a handler writes to it: a visitor
// without a cookie costs the store nothing however often it comes, until a handler sets
// something (Session::set, regenerate of a non-empty one). A session that would hold nothing but
// its CSRF token (a form page shown to a visitor who is not signed in) is not stored either: the
// token travels in the cookie, signed, until the session holds more (so that cookieless
// crawlers of a login page cannot fill the store, nor evict signed-in visitors from a bounded
// one). Such a token lasts absolute_timeout from when it was made. A visitor that sends no
// cookie, an unsigned, tampered or expired one (idle_timeout since its last request,
// absolute_timeout since it began) gets a new, empty session: refused cookies are never an
// error. The session is saved, and its cookie sent, after the handler (in the middleware's
// after()).
//
// A store that waits (an AsyncSessionStore that is no SessionStore: Redis) is awaited on the
// request's loop, never blocking it. When it cannot be reached the request is answered 503
// ("the session store cannot be reached", Retry-After: 1) rather than served as a new visitor
// (which would look like a logout, and lose what the handler writes), and counted in
// rivet_session_store_unavailable_total; the next request tries again, so service comes back
// with the store. A visitor without a cookie needs no load, and is served while it is away.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <rivet/cookie.hpp>
#include <rivet/middleware.hpp>
#include <rivet/redis.hpp>
#include <rivet/task.hpp>

namespace rivet {

using SessionData = std::map<std::string, std::string, std::less<>>;

// What a store keeps for one session id.
struct SessionRecord {
    SessionData data;
    std::chrono::system_clock::time_point created;    // for absolute_timeout
    std::chrono::system_clock::time_point last_seen;  // for idle_timeout
};

// Where InStore sessions live, for a store that waits (on the network): its operations are
// awaited on the request's I/O loop, from every loop at once. They throw when the store cannot
// answer (rivet::RedisUnavailable, or any std::exception): the request is then answered 503.
class AsyncSessionStore {
public:
    virtual ~AsyncSessionStore() = default;
    virtual Task<std::optional<SessionRecord>> load_async(std::string id) = 0;
    // Keeps `record` under `id` for `ttl` at least (the store may drop it after).
    virtual Task<> save_async(std::string id, SessionRecord record, std::chrono::seconds ttl) = 0;
    virtual Task<> remove_async(std::string id) = 0;
};

// A store that answers at once (in memory). Called on the request's I/O loop, from every loop at
// once: an implementation must be thread-safe and must not block for long. It is an
// AsyncSessionStore too, whose operations call these; the middleware calls these directly,
// without a coroutine: a synchronous store costs nothing for being usable as the other kind.
class SessionStore : public AsyncSessionStore {
public:
    virtual std::optional<SessionRecord> load(const std::string& id) = 0;
    virtual void save(const std::string& id, const SessionRecord& record,
                      std::chrono::seconds ttl) = 0;
    virtual void remove(const std::string& id) = 0;

    Task<std::optional<SessionRecord>> load_async(std::string id) final { co_return load(id); }
    Task<> save_async(std::string id, SessionRecord record, std::chrono::seconds ttl) final {
        save(id, record, ttl);
        co_return;
    }
    Task<> remove_async(std::string id) final {
        remove(id);
        co_return;
    }
};

// In memory, per process: at most `max_sessions`; saving one more evicts the least recently
// used. Expired sessions go when they are next looked up or evicted.
std::shared_ptr<SessionStore> memory_session_store(size_t max_sessions = 100'000);

// In Redis, shared by every instance that names the same server: a session is the key
// `key_prefix` + its id, holding its record as JSON, written with SET ... EX idle_timeout (so
// Redis drops it when idle, and every request that sees it sets the TTL again), removed with
// DEL; regenerate() writes the new key, then deletes the old. Redis's error replies and an
// unreachable Redis throw (the middleware answers 503); commands go on the loop's connection
// (rivet/redis.hpp), reopened by the next request once Redis is back.
std::shared_ptr<AsyncSessionStore> redis_session_store(RedisOptions redis,
                                                       std::string key_prefix = "rivet:session:");

// Where the data lives (see the top of this file). The cookie kinds need no store and suit
// any number of instances; a session in a cookie cannot be ended early by the server (a copy of
// the cookie stays valid until it expires), and logging out clears only the browser's copy.
enum class SessionStorage { InStore, InCookie, InEncryptedCookie };
// When the session cookie carries Secure: over TLS only (so that plain-HTTP development
// works), or always (behind a proxy that ends TLS).
enum class SecureCookie { WhenTls, Always };

struct SessionOptions {
    // The HMAC key (and InEncryptedCookie's key derivation secret): at least 32 bytes of
    // secret (std::invalid_argument otherwise). Every instance serving the same visitors needs
    // the same one; changing it ends every session.
    std::string secret;
    SessionStorage storage = SessionStorage::InStore;
    std::shared_ptr<AsyncSessionStore> store{};  // InStore; empty: memory_session_store()
    std::string cookie_name = "rivet_session";
    std::string path = "/";
    std::string domain{};
    SameSite same_site = SameSite::Lax;
    SecureCookie secure = SecureCookie::WhenTls;
    std::chrono::seconds idle_timeout = std::chrono::minutes(30);
    std::chrono::seconds absolute_timeout = std::chrono::hours(24);
    size_t max_cookie_bytes = 4096;  // in a cookie: name=value (browsers keep 4096 at most)
};

namespace detail {
struct SessionEngine;  // app/: the middleware's signing and storage
struct SessionAccess;
}  // namespace detail

// One visitor's session, as the handler sees it (rivet::session(req)).
class Session {
public:
    std::optional<std::string> get(std::string_view key) const;
    // Throws std::length_error when the storage is InCookie and the cookie would exceed
    // max_cookie_bytes (the data is left as it was).
    void set(std::string key, std::string value);
    void erase(std::string_view key);
    const SessionData& data() const { return data_; }
    // Whether the visitor came without a valid session (a CSRF token alone is none).
    bool is_new() const { return origin_ != Origin::Loaded; }

    // A new id for the same data (on login, against fixation): the old id is removed from the
    // store and the CSRF token renewed.
    void regenerate();
    // Ends the session (on logout): data cleared, removed from the store, cookie deleted. Writing
    // to it afterwards starts a new one.
    void destroy();

    // The session's CSRF token (rivet/csrf.hpp), made on first use and kept in the session.
    std::string csrf_token();

private:
    friend struct detail::SessionAccess;
    Session() = default;  // made by the middleware only
    // New: no cookie, or a refused one; TokenOnly: a cookie carrying only a CSRF token (InStore);
    // Loaded: a session from the store or the cookie.
    enum class Origin { New, TokenOnly, Loaded };
    // What after() must do: nothing, save, save under a new id, or remove and delete.
    enum class Change { None, Changed, Regenerated, Destroyed };
    std::shared_ptr<const detail::SessionEngine> engine_;
    SessionData data_;
    Origin origin_ = Origin::New;
    Change change_ = Change::None;
    std::string id_;  // InStore: the id the visitor sent; "" when new
    std::chrono::system_clock::time_point created_{};
};

// The request's session; throws std::logic_error when no sessions() middleware ran for it.
Session& session(const Request& req);

// Throws std::invalid_argument for a short secret, a cookie name or attributes Cookie refuses,
// or timeouts that are not positive.
std::shared_ptr<Middleware> sessions(SessionOptions options);

}  // namespace rivet
