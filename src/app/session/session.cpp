// rivet::Session: the handler's side of a session; the middleware (sessions.cpp) loads and
// saves it.
#include <rivet/session.hpp>

#include <stdexcept>

#include "app/session/session_engine.hpp"
#include "app/session/signer.hpp"

namespace rivet {

std::optional<std::string> Session::get(std::string_view key) const {
    auto it = data_.find(key);
    if (it == data_.end()) return std::nullopt;
    return it->second;
}

void Session::set(std::string key, std::string value) {
    SessionData before;
    const bool limited = engine_->in_cookie();
    if (limited) before = data_;
    data_.insert_or_assign(std::move(key), std::move(value));
    if (limited) {
        const auto now = std::chrono::system_clock::now();
        const size_t bytes =
            engine_->options.cookie_name.size() + 1 + engine_->encoded_size({data_, now, now});
        if (bytes > engine_->options.max_cookie_bytes) {
            data_ = std::move(before);
            throw std::length_error("session: the data would make a cookie of " +
                                    std::to_string(bytes) + " bytes, over max_cookie_bytes (" +
                                    std::to_string(engine_->options.max_cookie_bytes) +
                                    "): keep large data in a SessionStore");
        }
    }
    if (change_ == Change::None) change_ = Change::Changed;
    if (change_ == Change::Destroyed) change_ = Change::Regenerated;  // a new session
}

void Session::erase(std::string_view key) {
    auto it = data_.find(key);
    if (it == data_.end()) return;
    data_.erase(it);
    if (change_ == Change::None) change_ = Change::Changed;
}

void Session::regenerate() {
    change_ = Change::Regenerated;
    created_ = std::chrono::system_clock::now();
    // A token the old id's holder may know goes with it.
    if (auto it = data_.find(detail::kCsrfSessionKey); it != data_.end()) data_.erase(it);
}

void Session::destroy() {
    data_.clear();
    change_ = Change::Destroyed;
}

std::string Session::csrf_token() {
    if (auto known = get(detail::kCsrfSessionKey)) return *known;
    std::string token = app::random_token(32);
    set(std::string(detail::kCsrfSessionKey), token);
    return token;
}

Session& session(const Request& req) {
    if (Session* s = req.context().find<Session>()) return *s;
    throw std::logic_error("no session for this request: add app.use(rivet::sessions(...))");
}

namespace detail {
Session SessionAccess::make(std::shared_ptr<const SessionEngine> engine) {
    Session s;
    s.engine_ = std::move(engine);
    s.created_ = std::chrono::system_clock::now();
    return s;
}
}  // namespace detail

}  // namespace rivet
