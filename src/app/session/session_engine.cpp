#include "app/session/session_engine.hpp"

#include <nlohmann/json.hpp>

#include <atomic>
#include <charconv>
#include <stdexcept>

#include "http/cookie.hpp"

namespace rivet::detail {

namespace {

// The purposes signed with a value, so one kind of signed value never passes for the other.
constexpr std::string_view kIdPurpose = "rivet session id";
constexpr std::string_view kDataPurpose = "rivet session data";
constexpr std::string_view kTokenPurpose = "rivet session csrf token";

// Milliseconds: whole seconds would let a session expire up to a second early.
int64_t to_millis(std::chrono::system_clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

std::chrono::system_clock::time_point from_millis(int64_t ms) {
    return std::chrono::system_clock::time_point(std::chrono::milliseconds(ms));
}

SessionOptions checked(SessionOptions o) {
    if (!http::is_cookie_name(o.cookie_name))
        throw std::invalid_argument("sessions: invalid cookie name '" + o.cookie_name + "'");
    if (o.idle_timeout.count() <= 0 || o.absolute_timeout.count() <= 0)
        throw std::invalid_argument("sessions: timeouts must be positive");
    if (o.same_site == SameSite::None && o.secure != SecureCookie::Always)
        throw std::invalid_argument("sessions: SameSite=None needs secure = SecureCookie::Always");
    if (o.storage == SessionStorage::InStore && !o.store) o.store = memory_session_store();
    return o;
}

}  // namespace

SessionEngine::SessionEngine(SessionOptions o)
    : options(checked(std::move(o))), signer(options.secret), sealer(options.secret) {
    // Whatever the cookie would refuse, refuse it now rather than on the first request.
    Response probe;
    probe.cookie(cookie("x", true));
}

std::string SessionEngine::new_id() {
    return app::random_token(32);
}

std::string SessionEngine::signed_id(std::string_view id) const {
    return signer.sign(kIdPurpose, id);
}

std::optional<std::string> SessionEngine::verified_id(std::string_view cookie_value) const {
    auto id = signer.verify(kIdPurpose, cookie_value);
    if (!id) return std::nullopt;
    return std::string(*id);
}

std::string SessionEngine::signed_token(std::string_view token,
                                        std::chrono::system_clock::time_point made) const {
    // token '~' milliseconds: '~' is no base64url digit, so the split is unambiguous.
    return signer.sign(kTokenPurpose, std::string(token) + '~' + std::to_string(to_millis(made)));
}

std::optional<SessionRecord> SessionEngine::verified_token(
    std::string_view cookie_value, std::chrono::system_clock::time_point now) const {
    auto value = signer.verify(kTokenPurpose, cookie_value);
    if (!value) return std::nullopt;
    const size_t tilde = value->find('~');
    if (tilde == std::string_view::npos || tilde == 0) return std::nullopt;
    int64_t made = 0;
    const std::string_view millis = value->substr(tilde + 1);
    const auto [end, error] = std::from_chars(millis.data(), millis.data() + millis.size(), made);
    if (error != std::errc{} || end != millis.data() + millis.size()) return std::nullopt;
    SessionRecord record;
    record.data.emplace(kCsrfSessionKey, value->substr(0, tilde));
    record.created = from_millis(made);
    record.last_seen = now;
    return record;
}

bool SessionEngine::only_token(const SessionData& data) {
    return data.size() == 1 && data.begin()->first == kCsrfSessionKey;
}

std::string record_text(const SessionRecord& record) {
    nlohmann::json j = {
        {"d", record.data}, {"c", to_millis(record.created)}, {"s", to_millis(record.last_seen)}};
    return j.dump();
}

std::optional<SessionRecord> record_from_text(std::string_view text) {
    // Written by us (signed, or in our Redis), so well formed unless the secret leaked or the
    // key was written by something else; checked all the same.
    nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object() || !j["d"].is_object() || !j["c"].is_number_integer() ||
        !j["s"].is_number_integer())
        return std::nullopt;
    SessionRecord record;
    for (auto& [key, value] : j["d"].items()) {
        if (!value.is_string()) return std::nullopt;
        record.data.emplace(key, value.get<std::string>());
    }
    record.created = from_millis(j["c"].get<int64_t>());
    record.last_seen = from_millis(j["s"].get<int64_t>());
    return record;
}

namespace {
std::atomic<uint64_t> g_store_unavailable{0};
}

void count_session_store_unavailable() {
    g_store_unavailable.fetch_add(1, std::memory_order_relaxed);
}

uint64_t session_store_unavailable_total() {
    return g_store_unavailable.load(std::memory_order_relaxed);
}

std::string SessionEngine::encode(const SessionRecord& record) const {
    if (options.storage == SessionStorage::InEncryptedCookie)
        return sealer.seal(kDataPurpose, record_text(record));
    return signer.sign(kDataPurpose, app::base64url_encode(record_text(record)));
}

std::optional<SessionRecord> SessionEngine::decode(std::string_view cookie_value) const {
    if (options.storage == SessionStorage::InEncryptedCookie) {
        auto text = sealer.open(kDataPurpose, cookie_value);
        if (!text) return std::nullopt;
        return record_from_text(*text);
    }
    auto payload = signer.verify(kDataPurpose, cookie_value);
    if (!payload) return std::nullopt;
    auto text = app::base64url_decode(*payload);
    if (!text) return std::nullopt;
    return record_from_text(*text);
}

size_t SessionEngine::encoded_size(const SessionRecord& record) const {
    // base64url without padding: 4 digits per 3 bytes, and 2 or 3 for a last 1 or 2.
    const auto b64 = [](size_t n) { return n / 3 * 4 + (n % 3 == 0 ? 0 : n % 3 + 1); };
    const size_t text = record_text(record).size();
    if (options.storage == SessionStorage::InEncryptedCookie)
        return b64(app::Sealer::kOverheadBytes + text);
    return b64(text) + 1 + b64(32);  // '.' and the HMAC-SHA256
}

bool SessionEngine::expired(const SessionRecord& record,
                            std::chrono::system_clock::time_point now) const {
    return now - record.last_seen >= options.idle_timeout ||
           now - record.created >= options.absolute_timeout;
}

Cookie SessionEngine::cookie(std::string value, bool request_secure) const {
    return {.name = options.cookie_name,
            .value = std::move(value),
            .path = options.path,
            .domain = options.domain,
            .secure = options.secure == SecureCookie::Always || request_secure,
            .http_only = true,
            .same_site = options.same_site};
}

}  // namespace rivet::detail
