// The sessions() middleware: before() finds the visitor's session from its cookie (or starts
// an empty one), after() saves what the handler changed and sends the cookie when it changed.
#include <rivet/session.hpp>

#include "app/session/session_engine.hpp"

namespace rivet {

namespace {

using Clock = std::chrono::system_clock;
using detail::SessionAccess;

class SessionMiddleware final : public Middleware {
public:
    explicit SessionMiddleware(SessionOptions options)
        : engine_(std::make_shared<detail::SessionEngine>(std::move(options))) {}

    bool before(Request& req, Response&) override {
        Session session = SessionAccess::make(engine_);
        if (auto value = req.cookie(engine_->options.cookie_name)) load(*value, session);
        req.context().set(std::move(session));
        return true;
    }

    void after(const Request& req, Response& res) override {
        Session* session = req.context().find<Session>();
        if (!session) return;  // refused before routing: before() did not run
        if (engine_->options.storage == SessionStorage::InStore)
            save_in_store(req, *session, res);
        else
            save_in_cookie(req, *session, res);
    }

private:
    const SessionOptions& options() const { return engine_->options; }

    void load(std::string_view cookie_value, Session& session) const {
        const auto now = Clock::now();
        std::optional<SessionRecord> record;
        std::string id;
        if (options().storage == SessionStorage::InStore) {
            auto verified = engine_->verified_id(cookie_value);
            if (!verified) return;
            id = std::move(*verified);
            record = options().store->load(id);
        } else {
            record = engine_->decode(cookie_value);
        }
        if (!record) return;
        if (engine_->expired(*record, now)) {
            if (!id.empty()) options().store->remove(id);
            return;
        }
        SessionAccess::origin(session) = SessionAccess::Origin::Loaded;
        SessionAccess::id(session) = std::move(id);
        SessionAccess::data(session) = std::move(record->data);
        SessionAccess::created(session) = record->created;
    }

    SessionRecord record_of(Session& session) const {
        return {SessionAccess::data(session), SessionAccess::created(session), Clock::now()};
    }

    void send(const Request& req, Response& res, std::string value) const {
        res.cookie(engine_->cookie(std::move(value), req.secure()));
    }

    void send_deletion(const Request& req, Response& res) const {
        Cookie gone = engine_->cookie("", req.secure());
        gone.max_age = std::chrono::seconds(0);
        gone.expires = Clock::time_point{};
        res.cookie(gone);
    }

    void save_in_store(const Request& req, Session& session, Response& res) const {
        SessionStore& store = *options().store;
        std::string& id = SessionAccess::id(session);
        const bool loaded = SessionAccess::origin(session) == SessionAccess::Origin::Loaded;
        const bool empty = session.data().empty();
        switch (SessionAccess::change(session)) {
            case SessionAccess::Change::None:
                // Seen again: its idle timeout starts over.
                if (loaded) store.save(id, record_of(session), options().idle_timeout);
                return;
            case SessionAccess::Change::Changed:
                if (empty && id.empty()) return;  // nothing worth keeping yet
                if (!id.empty()) {
                    store.save(id, record_of(session), options().idle_timeout);
                    return;
                }
                break;
            case SessionAccess::Change::Regenerated:
                if (!id.empty()) store.remove(id);
                if (empty) {
                    if (loaded) send_deletion(req, res);
                    return;
                }
                break;
            case SessionAccess::Change::Destroyed:
                if (!id.empty()) store.remove(id);
                if (loaded) send_deletion(req, res);
                return;
        }
        // A new id: for a new session, or the same data under another id.
        id = detail::SessionEngine::new_id();
        store.save(id, record_of(session), options().idle_timeout);
        send(req, res, engine_->signed_id(id));
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
        send(req, res, engine_->encode(record_of(session)));
    }

    std::shared_ptr<const detail::SessionEngine> engine_;
};

}  // namespace

std::shared_ptr<Middleware> sessions(SessionOptions options) {
    return std::make_shared<SessionMiddleware>(std::move(options));
}

}  // namespace rivet
