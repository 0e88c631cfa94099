// What the sessions() middleware shares with the Session objects it makes: its options, its
// signer, and how a session becomes a cookie value and back.
#pragma once

#include <rivet/session.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "app/session/sealer.hpp"
#include "app/session/signer.hpp"

namespace rivet::detail {

// The session key Session::csrf_token keeps its token under, and csrf() reads.
inline constexpr std::string_view kCsrfSessionKey = "_csrf";

struct SessionEngine {
    explicit SessionEngine(SessionOptions options);

    // InStore: a fresh random id (32 bytes of entropy) and its signed cookie value.
    static std::string new_id();
    std::string signed_id(std::string_view id) const;
    // The id of a signed cookie value, nullopt when the signature does not match.
    std::optional<std::string> verified_id(std::string_view cookie_value) const;

    // InStore: a session holding only its CSRF token, as a signed cookie value (the token and
    // when it was made), and back: a record holding the token alone, created when the token was
    // made and last seen `now` (so only absolute_timeout ends it); nullopt when the signature
    // does not match or the value is malformed.
    std::string signed_token(std::string_view token,
                             std::chrono::system_clock::time_point made) const;
    std::optional<SessionRecord> verified_token(std::string_view cookie_value,
                                                std::chrono::system_clock::time_point now) const;
    // Whether `data` holds the CSRF token and nothing else.
    static bool only_token(const SessionData& data);

    // Whether the data travels in the cookie (InCookie, InEncryptedCookie): no store.
    bool in_cookie() const { return options.storage != SessionStorage::InStore; }
    // InCookie: the record as a signed cookie value; InEncryptedCookie: sealed (encrypted and
    // authenticated). And back: nullopt when tampered with, malformed or of the other kind.
    std::string encode(const SessionRecord& record) const;
    std::optional<SessionRecord> decode(std::string_view cookie_value) const;
    // encode(record).size(), from the lengths alone: no MAC, no encryption (Session::set checks
    // the limit on every write).
    size_t encoded_size(const SessionRecord& record) const;

    // Whether a record is past idle_timeout or absolute_timeout at `now`.
    bool expired(const SessionRecord& record, std::chrono::system_clock::time_point now) const;

    // The session cookie carrying `value` ("" with deletion) for a request over TLS or not.
    Cookie cookie(std::string value, bool request_secure) const;

    SessionOptions options;
    app::Signer signer;
    app::Sealer sealer;
};

// A record as text (JSON: data, created and last seen in ms) and back (nullopt when malformed):
// the cookie-only encoding's payload, and what redis_session_store keeps.
std::string record_text(const SessionRecord& record);
std::optional<SessionRecord> record_from_text(std::string_view text);

// Requests answered 503 because the session store could not be reached, in this process
// (rivet_session_store_unavailable_total); from any thread.
void count_session_store_unavailable();
uint64_t session_store_unavailable_total();

// The Session's private parts, for the middleware.
struct SessionAccess {
    using Origin = Session::Origin;
    using Change = Session::Change;
    static Session make(std::shared_ptr<const SessionEngine> engine);
    static Session::Origin& origin(Session& s) { return s.origin_; }
    static Session::Change& change(Session& s) { return s.change_; }
    static std::string& id(Session& s) { return s.id_; }
    static SessionData& data(Session& s) { return s.data_; }
    static std::chrono::system_clock::time_point& created(Session& s) { return s.created_; }
};

}  // namespace rivet::detail
