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
// Storage (SessionOptions::storage): InStore keeps the data in a SessionStore (by default one
// in memory, per process, shared by the I/O loops) and gives the browser only a random id,
// signed; InCookie keeps the data in the cookie itself, signed (not encrypted: the visitor can
// read it, not change it), and is limited to SessionOptions::max_cookie_bytes.
//
// A session is made only when a handler writes to it; a visitor that sends no cookie, an
// unsigned, tampered or expired one (idle_timeout since its last request, absolute_timeout since
// it began) gets a new, empty session: refused cookies are never an error. The session is saved,
// and its cookie sent, after the handler (in the middleware's after()).
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

namespace rivet {

using SessionData = std::map<std::string, std::string, std::less<>>;

// What a store keeps for one session id.
struct SessionRecord {
    SessionData data;
    std::chrono::system_clock::time_point created;    // for absolute_timeout
    std::chrono::system_clock::time_point last_seen;  // for idle_timeout
};

// Where InStore sessions live. Called on the request's I/O loop, from every loop at once: an
// implementation must be thread-safe and must not block for long (a store on the network, such
// as Redis, will need an asynchronous variant of this interface).
class SessionStore {
public:
    virtual ~SessionStore() = default;
    virtual std::optional<SessionRecord> load(const std::string& id) = 0;
    // Keeps `record` under `id` for `ttl` at least (the store may drop it after).
    virtual void save(const std::string& id, const SessionRecord& record,
                      std::chrono::seconds ttl) = 0;
    virtual void remove(const std::string& id) = 0;
};

// In memory, per process: at most `max_sessions`; saving one more evicts the least recently
// used. Expired sessions go when they are next looked up or evicted.
std::shared_ptr<SessionStore> memory_session_store(size_t max_sessions = 100'000);

enum class SessionStorage { InStore, InCookie };
// When the session cookie carries Secure: over TLS only (so that plain-HTTP development
// works), or always (behind a proxy that ends TLS).
enum class SecureCookie { WhenTls, Always };

struct SessionOptions {
    // The HMAC key: at least 32 bytes of secret (std::invalid_argument otherwise). Every
    // instance serving the same visitors needs the same one; changing it ends every session.
    std::string secret;
    SessionStorage storage = SessionStorage::InStore;
    std::shared_ptr<SessionStore> store{};  // InStore; empty: memory_session_store()
    std::string cookie_name = "rivet_session";
    std::string path = "/";
    std::string domain{};
    SameSite same_site = SameSite::Lax;
    SecureCookie secure = SecureCookie::WhenTls;
    std::chrono::seconds idle_timeout = std::chrono::minutes(30);
    std::chrono::seconds absolute_timeout = std::chrono::hours(24);
    size_t max_cookie_bytes = 4096;  // InCookie: name=value (browsers keep 4096 at most)
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
    // Whether the visitor came without a valid session.
    bool is_new() const { return origin_ == Origin::New; }

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
    enum class Origin { New, Loaded };
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
