// The sessions() middleware: before() finds the visitor's session from its cookie (or starts
// an empty one), after() saves what the handler changed and sends the cookie when it changed.
#include <rivet/http_error.hpp>
#include <rivet/session.hpp>

#include "app/session/session_engine.hpp"

namespace rivet {

namespace {

using Clock = std::chrono::system_clock;
using detail::SessionAccess;

// What after() leaves to the store, and the cookie to send once the store has done it (never
// before: a cookie naming an id the store did not take would be worth nothing).
struct Saving {
    // Send: the session's new id; SendToken: the CSRF token alone, nothing stored.
    enum class Cookie : uint8_t { Keep, Send, SendToken, Delete };
    std::string save_id;  // "": nothing to save
    SessionRecord record;
    // "": nothing to remove. A waiting store removes it after the save (rotation: should the
    // save fail, the visitor keeps the old session, not none).
    std::string remove_id;
    Cookie cookie = Cookie::Keep;
};

class SessionMiddleware final : public Middleware {
public:
    explicit SessionMiddleware(SessionOptions options)
        : engine_(std::make_shared<detail::SessionEngine>(std::move(options))),
          store_(engine_->options.store.get()),
          sync_store_(dynamic_cast<SessionStore*>(store_)) {}

    // Only a store that is no SessionStore makes requests wait.
    bool waits() const override {
        return options().storage == SessionStorage::InStore && !sync_store_;
    }

    bool before(Request& req, Response&) override {
        Session session = SessionAccess::make(engine_);
        if (auto value = req.cookie(options().cookie_name)) {
            if (engine_->in_cookie()) {
                adopt(session, "", engine_->decode(*value));
            } else if (auto id = engine_->verified_id(*value)) {
                if (adopt(session, *id, sync_store_->load(*id))) sync_store_->remove(*id);
            } else {
                adopt_token(session, *value);
            }
        }
        req.context().set(std::move(session));
        return true;
    }

    Task<bool> before_waiting(Request& req, Response&) override {
        Session session = SessionAccess::make(engine_);
        std::optional<std::string> id;
        if (auto value = req.cookie(options().cookie_name)) {
            id = engine_->verified_id(*value);
            if (!id) adopt_token(session, *value);
        }
        if (id) {  // no cookie, or a refused one: nothing to ask the store
            std::optional<SessionRecord> record;
            bool reached = true;
            try {
                record = co_await store_->load_async(*id);
                if (adopt(session, *id, std::move(record))) co_await store_->remove_async(*id);
            } catch (const std::exception&) {
                reached = false;
            }
            if (!reached) unavailable();
        }
        req.context().set(std::move(session));
        co_return true;
    }

    void after(const Request& req, Response& res) override {
        Session* session = req.context().find<Session>();
        if (!session) return;  // refused before routing: before() did not run
        if (engine_->in_cookie()) return save_in_cookie(req, *session, res);
        Saving saving = plan(*session);
        // The old id goes first here: a bounded store that is full must not evict another
        // visitor's session to make room for one that is about to leave.
        if (!saving.remove_id.empty()) sync_store_->remove(saving.remove_id);
        if (!saving.save_id.empty())
            sync_store_->save(saving.save_id, saving.record, options().idle_timeout);
        send(req, res, *session, saving.cookie);
    }

    Task<> after_waiting(const Request& req, Response& res) override {
        Session* session = req.context().find<Session>();
        if (!session) co_return;  // refused before routing, or the store failed in before()
        Saving saving = plan(*session);
        bool reached = true;
        try {
            if (!saving.save_id.empty())
                co_await store_->save_async(saving.save_id, std::move(saving.record),
                                            options().idle_timeout);
            if (!saving.remove_id.empty()) co_await store_->remove_async(saving.remove_id);
        } catch (const std::exception&) {
            reached = false;
        }
        if (!reached) unavailable();
        send(req, res, *session, saving.cookie);
    }

private:
    const SessionOptions& options() const { return engine_->options; }

    [[noreturn]] static void unavailable() {
        detail::count_session_store_unavailable();
        throw HttpError(503, "Service Unavailable: the session store cannot be reached; try again")
            .header("Retry-After", "1");
    }

    // Makes `session` the loaded one when `record` is there and not expired. True when an
    // expired record under `id` is left for the caller to remove.
    bool adopt(Session& session, const std::string& id, std::optional<SessionRecord> record) const {
        if (!record) return false;
        if (engine_->expired(*record, Clock::now())) return !id.empty();
        SessionAccess::origin(session) = SessionAccess::Origin::Loaded;
        SessionAccess::id(session) = id;
        SessionAccess::data(session) = std::move(record->data);
        SessionAccess::created(session) = record->created;
        return false;
    }

    // InStore: makes `session` the CSRF token a cookie carries, when it is one and not expired.
    void adopt_token(Session& session, std::string_view cookie_value) const {
        const auto now = Clock::now();
        auto record = engine_->verified_token(cookie_value, now);
        if (!record || engine_->expired(*record, now)) return;
        SessionAccess::origin(session) = SessionAccess::Origin::TokenOnly;
        SessionAccess::data(session) = std::move(record->data);
        SessionAccess::created(session) = record->created;
    }

    SessionRecord record_of(Session& session) const {
        return {SessionAccess::data(session), SessionAccess::created(session), Clock::now()};
    }

    // InStore: what the store must do for what the handler did. Nothing for a session that was
    // never stored and holds nothing (lazy creation: cookieless visitors cost the store nothing),
    // nor for one that holds only its CSRF token (it travels in the cookie).
    Saving plan(Session& session) const {
        Saving out;
        const std::string& id = SessionAccess::id(session);
        const bool loaded = SessionAccess::origin(session) == SessionAccess::Origin::Loaded;
        const bool has_cookie = SessionAccess::origin(session) != SessionAccess::Origin::New;
        const bool empty = session.data().empty();
        switch (SessionAccess::change(session)) {
            case SessionAccess::Change::None:
                // Seen again: its idle timeout starts over.
                if (loaded) out.save_id = id;
                break;
            case SessionAccess::Change::Changed:
                if (!id.empty())
                    out.save_id = id;
                else if (!empty)
                    out.cookie = Saving::Cookie::Send;  // a new session: a new id below
                break;
            case SessionAccess::Change::Regenerated:
                out.remove_id = id;
                if (!empty)
                    out.cookie = Saving::Cookie::Send;
                else if (has_cookie)
                    out.cookie = Saving::Cookie::Delete;
                break;
            case SessionAccess::Change::Destroyed:
                out.remove_id = id;
                if (has_cookie) out.cookie = Saving::Cookie::Delete;
                break;
        }
        if (out.cookie == Saving::Cookie::Send &&
            detail::SessionEngine::only_token(session.data())) {
            out.cookie = Saving::Cookie::SendToken;
            SessionAccess::id(session).clear();  // the old id, if any, is removed above
        } else if (out.cookie == Saving::Cookie::Send) {
            // A new id: for a new session, or the same data under another id.
            SessionAccess::id(session) = detail::SessionEngine::new_id();
            out.save_id = SessionAccess::id(session);
        }
        if (!out.save_id.empty()) out.record = record_of(session);
        return out;
    }

    void send(const Request& req, Response& res, Session& session, Saving::Cookie cookie) const {
        if (cookie == Saving::Cookie::Send)
            send_value(req, res, engine_->signed_id(SessionAccess::id(session)));
        else if (cookie == Saving::Cookie::SendToken)
            send_value(req, res,
                       engine_->signed_token(*session.get(detail::kCsrfSessionKey),
                                             SessionAccess::created(session)));
        else if (cookie == Saving::Cookie::Delete)
            send_deletion(req, res);
    }

    void send_value(const Request& req, Response& res, std::string value) const {
        res.cookie(engine_->cookie(std::move(value), req.secure()));
    }

    void send_deletion(const Request& req, Response& res) const {
        Cookie gone = engine_->cookie("", req.secure());
        gone.max_age = std::chrono::seconds(0);
        gone.expires = Clock::time_point{};
        res.cookie(gone);
    }

    void save_in_cookie(const Request& req, Session& session, Response& res) const {
        const bool loaded = SessionAccess::origin(session) == SessionAccess::Origin::Loaded;
        if (session.data().empty() ||
            SessionAccess::change(session) == SessionAccess::Change::Destroyed) {
            if (loaded) send_deletion(req, res);
            return;
        }
        if (SessionAccess::change(session) == SessionAccess::Change::None && !loaded) return;
        // Sent on every request: the last-seen time it carries is what idle_timeout counts from.
        send_value(req, res, engine_->encode(record_of(session)));
    }

    std::shared_ptr<const detail::SessionEngine> engine_;
    AsyncSessionStore* store_;  // InStore; owned by engine_'s options
    SessionStore* sync_store_;  // store_, when it answers at once: no coroutine needed
};

}  // namespace

std::shared_ptr<Middleware> sessions(SessionOptions options) {
    return std::make_shared<SessionMiddleware>(std::move(options));
}

}  // namespace rivet
