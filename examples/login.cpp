// A login page with rivet: an HTML form, a session behind a signed cookie, CSRF tokens in the
// forms, a page that shows who is signed in, and logout.
//
//   ./build/example_login [port] [--cookie-sessions | --encrypted-cookie-sessions] [--idle=S]
//                         [--absolute=S] [--max-sessions=N] [--redis=IP:PORT] [--metrics]
//   then open http://localhost:8080/ and sign in as ada / lovelace (or alan / turing).
//
// The signing secret comes from RIVET_SESSION_SECRET (32 bytes at least); without it one is
// made at start, so sessions end when the process does. With --redis, sessions live in that Redis:
// every instance started with the same secret and Redis shares them.
#include <rivet/rivet.hpp>

#include <cstdlib>
#include <map>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>

using rivet::HttpError, rivet::Request, rivet::Response;
using namespace std::chrono_literals;

namespace {

const std::map<std::string, std::string, std::less<>> kUsers = {{"ada", "lovelace"},
                                                                {"alan", "turing"}};

std::string page(std::string_view title, std::string_view content) {
    return "<!doctype html><html><head><meta charset=utf-8><title>" + std::string(title) +
           "</title></head><body>" + std::string(content) + "</body></html>";
}

std::string csrf_input(rivet::Session& session) {
    return "<input type=hidden name=_csrf value=\"" + rivet::html_escape(session.csrf_token()) +
           "\">";
}

std::string secret_from_environment() {
    if (const char* secret = std::getenv("RIVET_SESSION_SECRET")) return secret;
    std::random_device random;
    std::string secret;
    for (int i = 0; i < 64; ++i) secret += "0123456789abcdef"[random() & 15];  // 256 bits
    return secret;
}

}  // namespace

int main(int argc, char** argv) {
    rivet::SessionOptions sessions{.secret = secret_from_environment()};
    size_t max_sessions = 100'000;
    uint16_t port = 8080;
    bool metrics = false;  // GET /metrics (rivet_session_store_unavailable_total among them)
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--cookie-sessions")
            sessions.storage = rivet::SessionStorage::InCookie;
        else if (arg == "--encrypted-cookie-sessions")
            sessions.storage = rivet::SessionStorage::InEncryptedCookie;
        else if (arg.starts_with("--idle="))
            sessions.idle_timeout = std::chrono::seconds(std::stoi(arg.substr(7)));
        else if (arg.starts_with("--absolute="))
            sessions.absolute_timeout = std::chrono::seconds(std::stoi(arg.substr(11)));
        else if (arg.starts_with("--max-sessions="))
            max_sessions = std::stoul(arg.substr(15));
        else if (arg == "--metrics")
            metrics = true;
        else if (arg.starts_with("--redis=")) {
            const std::string where = arg.substr(8);
            const size_t colon = where.rfind(':');
            sessions.store =
                rivet::redis_session_store({.host = where.substr(0, colon),
                                            .port = uint16_t(std::stoi(where.substr(colon + 1)))});
        } else
            port = uint16_t(std::stoi(arg));
    }
    if (sessions.storage == rivet::SessionStorage::InStore && !sessions.store)
        sessions.store = rivet::memory_session_store(max_sessions);

    rivet::App app;
    app.use(rivet::sessions(sessions));
    app.use(rivet::csrf());

    app.get("/", [](Request& req, Response& res) {
        rivet::Session& session = rivet::session(req);
        if (auto user = session.get("user")) {
            res.html(page("Signed in", "<p id=user>Signed in as " + rivet::html_escape(*user) +
                                           "</p><form method=post action=/logout>" +
                                           csrf_input(session) +
                                           "<button id=logout>Sign out</button></form>"));
            return;
        }
        res.html(page("Sign in", "<form method=post action=/login>" + csrf_input(session) +
                                     "<input name=username id=username value=\"" +
                                     rivet::html_escape(req.cookie("last_user").value_or("")) +
                                     "\"> "
                                     "<input name=password id=password type=password> "
                                     "<button id=login>Sign in</button></form>"));
    });
    app.post("/login", [](Request& req, Response& res) {
        // What the HTML form posts (a 413 past the parser's limits).
        const rivet::Form form = rivet::parse_urlencoded_form(req.body());
        const std::string* user = form.field("username");
        const std::string* password = form.field("password");
        auto known = kUsers.find(user ? *user : "");
        if (known == kUsers.end() || !password || known->second != *password) {
            res.status(401).html(
                page("Sign in", "<p>Wrong name or password. <a href=/>Again</a></p>"));
            return;
        }
        rivet::Session& session = rivet::session(req);
        session.regenerate();  // a session id planted before the login is worth nothing after
        session.set("user", *user);
        // A second cookie of the same response: the name, to fill the form in next time.
        res.cookie({.name = "last_user",
                    .value = *user,
                    .path = "/",
                    .max_age = std::chrono::days(30),
                    .http_only = true,
                    .same_site = rivet::SameSite::Strict});
        res.status(303).header("Location", "/");
    });
    app.post("/logout", [](Request& req, Response& res) {
        rivet::session(req).destroy();
        res.status(303).header("Location", "/");
    });

    // For scripts (and the tests): who is signed in, the token to send as X-CSRF-Token, a note
    // kept in the session, and a preference cookie set from the query.
    auto whoami = [](Request& req, Response& res) {
        rivet::Session& session = rivet::session(req);
        auto user = session.get("user");
        res.json({{"user", user ? nlohmann::json(*user) : nlohmann::json(nullptr)},
                  {"note", session.get("note").value_or("")},
                  {"new_session", session.is_new()}});
    };
    app.get("/whoami", whoami);
    // The same on the worker pool (as a handler with CPU work would be): its session too.
    app.get("/whoami-offloaded", whoami).offload();
    // A WebSocket for signed-in visitors only: the session is read before the 101 (the
    // handshake is a request like any other, behind the same middleware), and the socket greets
    // its user by name.
    app.ws("/ws/hello", {.on_upgrade =
                             [](rivet::WebSocketUpgrade& upgrade) {
                                 auto user = rivet::session(upgrade.request()).get("user");
                                 if (!user) throw HttpError(401, "sign in first");
                                 upgrade.data = *user;
                             },
                         .on_open =
                             [](rivet::WebSocket& ws) {
                                 ws.send("hello " + std::any_cast<std::string>(ws.data()));
                             }});
    app.get("/csrf", [](Request& req, Response& res) {
        res.json({{"token", rivet::session(req).csrf_token()}});
    });
    app.post("/note", [](Request& req, Response& res) {
        try {
            rivet::session(req).set("note", std::string(req.body()));
        } catch (const std::length_error& e) {  // InCookie: over max_cookie_bytes
            throw HttpError(413, "the note does not fit in the session cookie");
        }
        res.status(204);
    });
    // The same note, its body read as a stream (for any size; the session's limits still hold):
    // the session is there for a streamed body too, and CSRF takes its token from the header.
    app.post("/note-stream",
             [](Request& req, Response& res) -> rivet::Task<> {
                 std::string note;
                 rivet::BodyStream body = req.body_stream();
                 while (auto piece = co_await body.next()) note += *piece;
                 try {
                     rivet::session(req).set("note", std::move(note));
                 } catch (const std::length_error& e) {
                     throw HttpError(413, "the note does not fit in the session cookie");
                 }
                 res.status(204);
             })
        .stream_body();
    app.get("/theme", [](Request& req, Response& res) {
        // A value that is no cookie-value (a space, ';') throws: a 500, never a broken field.
        res.cookie({.name = "theme",
                    .value = req.query("value").value_or("light"),
                    .path = "/",
                    .max_age = std::chrono::days(365),
                    .same_site = rivet::SameSite::Lax});
        res.json({{"theme", req.cookie("theme") ? std::string(*req.cookie("theme")) : ""}});
    });

    rivet::RunOptions run{.port = port};
    run.ops.admin.metrics = metrics;
    app.run(run);
}
