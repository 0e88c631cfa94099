// A TODO service, as a new user would write it with rivet: CRUD on /todos and /todos/:id with
// JSON validation, bearer-token auth on every /todos route, CORS, a request id, a static front
// page, one CPU-heavy route and one that waits on a slow outside service without holding a thread.
//
//   ./build/example_todo_api [port] [front-page-dir]
//   curl -H 'Authorization: Bearer alice-token' -d '{"title":"write docs"}' localhost:8080/todos
#include <rivet/cors.hpp>
#include <rivet/request_id.hpp>
#include <rivet/rivet.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

using rivet::HttpError, rivet::Request, rivet::Response;
using json = nlohmann::json;

struct User {
    std::string name;
};

struct Todo {
    std::string owner, title;
    bool done = false;
    json to_json(int64_t id) const { return {{"id", id}, {"title", title}, {"done", done}}; }
};

// Handlers run on several I/O loops at once: the store takes a lock.
class TodoStore {
public:
    json list(const std::string& owner) {
        std::lock_guard lock(mutex_);
        json out = json::array();
        for (auto& [id, t] : todos_)
            if (t.owner == owner) out.push_back(t.to_json(id));
        return out;
    }
    json add(Todo todo) {
        std::lock_guard lock(mutex_);
        int64_t id = next_id_++;
        return todos_.emplace(id, std::move(todo)).first->second.to_json(id);
    }
    // Applies `change` to the user's todo `id`; 404 when there is none (or it is another's).
    template <class Change>
    json update(const std::string& owner, int64_t id, Change change) {
        std::lock_guard lock(mutex_);
        Todo& todo = find(owner, id);
        change(todo);
        return todo.to_json(id);
    }
    void remove(const std::string& owner, int64_t id) {
        std::lock_guard lock(mutex_);
        find(owner, id);
        todos_.erase(id);
    }

private:
    Todo& find(const std::string& owner, int64_t id) {
        auto it = todos_.find(id);
        if (it == todos_.end() || it->second.owner != owner)
            throw HttpError(404, "no todo " + std::to_string(id));
        return it->second;
    }
    std::mutex mutex_;
    std::map<int64_t, Todo> todos_;
    int64_t next_id_ = 1;
};

// Validation errors are the client's: 400 with a JSON body saying what is wrong.
Todo todo_from(const Request& req, const std::string& owner, const Todo* old = nullptr) {
    json body = req.json();
    if (!body.is_object()) throw HttpError(400, "the body must be a JSON object");
    Todo todo = old ? *old : Todo{owner, "", false};
    if (body.contains("title")) {
        if (!body["title"].is_string() || body["title"].get<std::string>().empty() ||
            body["title"].get<std::string>().size() > 200)
            throw HttpError(400, "title must be a string of 1 to 200 characters");
        todo.title = body["title"];
    } else if (!old) {
        throw HttpError(400, "title is required");
    }
    if (body.contains("done")) {
        if (!body["done"].is_boolean()) throw HttpError(400, "done must be true or false");
        todo.done = body["done"];
    }
    return todo;
}

int main(int argc, char** argv) {
    uint16_t port = argc > 1 ? uint16_t(std::stoi(argv[1])) : 8080;
    std::string front = argc > 2 ? argv[2] : "examples/todo_public";
    TodoStore store;
    const std::map<std::string, std::string, std::less<>> tokens = {{"alice-token", "alice"},
                                                                    {"bob-token", "bob"}};
    rivet::App app;
    app.use(rivet::cors({.expose_headers = {"X-Request-Id"}}));
    app.use(rivet::request_id());
    // Every /todos route: a bearer token names the user, handlers read it from the context.
    app.use("/todos", rivet::before([&tokens](Request& req, Response&) {
                std::string_view auth = req.header("Authorization");
                auto user =
                    auth.starts_with("Bearer ") ? tokens.find(auth.substr(7)) : tokens.end();
                if (user == tokens.end())
                    throw HttpError(401, "a valid bearer token is required")
                        .header("WWW-Authenticate", "Bearer");
                req.context().set(User{user->second});
                return true;
            }));
    auto user = [](const Request& req) { return req.context().get<User>().name; };

    app.get("/todos", [&](Request& req, Response& res) { res.json(store.list(user(req))); });
    app.post("/todos",
             [&](Request& req, Response& res) {
                 json todo = store.add(todo_from(req, user(req)));
                 res.status(201).header("Location",
                                        "/todos/" + std::to_string(todo["id"].get<int64_t>()));
                 res.json(todo);
             })
        .max_body(64 * 1024);  // a todo is small: larger bodies are refused, 413
    // ":id<int>" matches digits only: /todos/abc is a 404 before any handler runs.
    auto id = [](const Request& req) { return *req.param_as<int64_t>("id"); };
    app.get("/todos/:id<int>", [&](Request& req, Response& res) {
        res.json(store.update(user(req), id(req), [](Todo&) {}));
    });
    app.patch("/todos/:id<int>", [&](Request& req, Response& res) {
        res.json(
            store.update(user(req), id(req), [&](Todo& t) { t = todo_from(req, t.owner, &t); }));
    });
    app.del("/todos/:id<int>", [&](Request& req, Response& res) {
        store.remove(user(req), id(req));
        res.status(204);
    });

    // CPU-heavy: on the worker pool, so the I/O loops keep serving.
    app.get("/primes/:below<uint>",
            [](Request& req, Response& res) {
                uint64_t below = *req.param_as<uint64_t>("below"), count = 0;
                if (below > 10'000'000) throw HttpError(400, "below must be at most 10000000");
                for (uint64_t n = 2; n < below; ++n) {
                    bool prime = true;
                    for (uint64_t d = 2; d * d <= n && prime; ++d) prime = n % d != 0;
                    count += prime;
                }
                res.json({{"below", below}, {"primes", count}});
            })
        .offload();

    // A slow outside service (200 ms), awaited on the loop: no thread waits for it.
    app.get("/forecast", [](Request&, Response& res) -> rivet::Task<> {
        co_await rivet::sleep(std::chrono::milliseconds(200));
        res.json({{"forecast", "sunny"}});
    });

    app.serve_static("/", front);
    app.run({.port = port});
}
