// A live service, as a new user would write it with rivet: a notes API kept in memory, and a
// feed of its changes pushed to clients over WebSocket and over Server-Sent Events (with ids, so
// a reconnecting EventSource resumes where it left off). Writes need a bearer token. On SIGTERM
// the event streams end and the WebSockets close at once, so the server stops promptly.
//
//   ./build/example_notes_feed [port] [token]            (token: "secret-token" by default)
//   curl -H 'Authorization: Bearer secret-token' -d '{"text":"buy milk"}' localhost:8080/notes
//   curl localhost:8080/notes
//   curl -X DELETE -H 'Authorization: Bearer secret-token' localhost:8080/notes/1
//   curl -N localhost:8080/feed/events                    (add -H 'Last-Event-ID: 3' to resume)
//   websocat ws://localhost:8080/feed                     (or any WebSocket client)
//
// Each change is one JSON text, the same on both feeds:
//   {"id":1,"note":{"id":1,"text":"buy milk"},"type":"created"}
//   {"id":2,"note":{"id":1},"type":"deleted"}
#include <rivet/event_stream.hpp>
#include <rivet/rivet.hpp>
#include <rivet/websocket.hpp>

#include <charconv>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <vector>

using rivet::HttpError, rivet::Request, rivet::Response;
using json = nlohmann::json;

// The notes, and the changes made to them: one lock for both, so that every client sees the
// changes in the order they were made, and a replay never misses or repeats one.
class Notes {
public:
    explicit Notes(rivet::App& app) : app_(app) {}

    json list() {
        std::lock_guard lock(mutex_);
        json out = json::array();
        for (auto& [id, text] : notes_) out.push_back({{"id", id}, {"text", text}});
        return out;
    }
    json add(std::string text) {
        std::lock_guard lock(mutex_);
        int64_t id = next_note_++;
        json note = {{"id", id}, {"text", text}};
        notes_.emplace(id, std::move(text));
        announce("created", note);
        return note;
    }
    void remove(int64_t id) {
        std::lock_guard lock(mutex_);
        if (notes_.erase(id) == 0) throw HttpError(404, "no note " + std::to_string(id));
        announce("deleted", {{"id", id}});
    }

    // A new SSE client: first the kept changes after the one it saw last (none: it is new, and
    // gets only what comes next), then every change as it happens.
    void follow(rivet::EventStream stream) {
        std::lock_guard lock(mutex_);
        uint64_t seen = 0;
        const std::string& last = stream.last_event_id();
        if (std::from_chars(last.data(), last.data() + last.size(), seen).ec == std::errc{})
            for (auto& change : recent_)
                if (change.id > seen) stream.send("", change.text, std::to_string(change.id));
        std::erase_if(streams_, [](const rivet::EventStream& s) { return s.closed(); });
        streams_.push_back(std::move(stream));
    }
    // At shutdown: end every event stream now, rather than when the drain gets to them.
    void end_streams() {
        std::lock_guard lock(mutex_);
        for (auto& stream : streams_) stream.close();
        streams_.clear();
    }

private:
    struct Change {
        uint64_t id;
        std::string text;
    };
    static constexpr size_t kKeptChanges = 100;  // how far back a reconnect can resume

    // Called with the lock held: sends and sending order are one.
    void announce(const char* type, const json& note) {
        uint64_t id = next_change_++;
        std::string text = json{{"id", id}, {"type", type}, {"note", note}}.dump();
        app_.publish("feed", text);  // every WebSocket subscribed to "feed", on every loop
        for (auto& stream : streams_) stream.send("", text, std::to_string(id));
        recent_.push_back({id, std::move(text)});
        if (recent_.size() > kKeptChanges) recent_.pop_front();
    }

    rivet::App& app_;
    std::mutex mutex_;  // handlers run on several I/O loops at once
    std::map<int64_t, std::string> notes_;
    int64_t next_note_ = 1;
    std::deque<Change> recent_;
    uint64_t next_change_ = 1;
    std::vector<rivet::EventStream> streams_;
};

std::string text_from(const Request& req) {
    json body = req.json();  // not JSON: 400
    if (!body.is_object() || !body.contains("text") || !body["text"].is_string())
        throw HttpError(400, "the body must be {\"text\": \"...\"}");
    std::string text = body["text"];
    if (text.empty() || text.size() > 1000)
        throw HttpError(400, "text must be 1 to 1000 characters");
    return text;
}

int main(int argc, char** argv) {
    uint16_t port = argc > 1 ? uint16_t(std::stoi(argv[1])) : 8080;
    const std::string bearer = std::string("Bearer ") + (argc > 2 ? argv[2] : "secret-token");
    rivet::App app;
    Notes notes(app);

    // Reading is open to all; writing needs the token.
    auto require_writer = [&bearer](const Request& req) {
        if (req.header("Authorization") != bearer)
            throw HttpError(401, "a valid bearer token is required")
                .header("WWW-Authenticate", "Bearer");
    };
    app.get("/notes", [&](Request&, Response& res) { res.json(notes.list()); });
    app.post("/notes",
             [&](Request& req, Response& res) {
                 require_writer(req);
                 res.status(201).json(notes.add(text_from(req)));
             })
        .max_body(16 * 1024);
    app.del("/notes/:id<int>", [&](Request& req, Response& res) {
        require_writer(req);
        notes.remove(*req.param_as<int64_t>("id"));
        res.status(204);
    });

    // The feed over WebSocket: a subscriber to the topic "feed"; what it sends is ignored.
    app.ws("/feed", {.on_open = [](rivet::WebSocket& ws) { ws.subscribe("feed"); }});
    // The feed over Server-Sent Events.
    app.get("/feed/events",
            [&](Request& req, Response& res) { notes.follow(rivet::event_stream(req, res)); });

    // SIGTERM: the server closes every WebSocket (1001, "going away") by itself; the event
    // streams are ours to end.
    app.on_shutdown([&notes] { notes.end_streams(); });
    app.run({.port = port});
}
