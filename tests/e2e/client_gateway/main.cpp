// The HTTP client's end-to-end test program (tests/e2e/test_http_client.py): a rivet app whose
// routes call other servers with rivet::HttpClient, as a handler would. Public API only.
//
//   client_gateway PORT
//   GET /fetch?url=U[&method=M][&max=BYTES][&timeout_ms=MS][&connect_timeout_ms=MS]
//              [&redirects=N][&ca=FILE][&insecure=1][&body=TEXT]
//       -> 200 {"status", "reason", "body", "url", "reused", "headers"} or
//          502 {"error": kind, "message"}
//   GET /fetch_many?url=U&n=N  -> N requests one after another; {"statuses", "reused"}
//   GET /fetch_both?a=U&b=U    -> both at once (when_all): {"a": body, "b": body}
//   GET /fetch_deadline?url=U&ms=MS -> with_timeout around the request: its answer, or 504
//   GET /stream?url=U[&pause_ms=MS][&stop_after=BYTES] -> the body read in pieces:
//              {"status", "pieces", "bytes", "largest", "head"}
//   GET /pool                  -> this loop's pool counters {"opened", "reused", "idle"}
#include <rivet/rivet.hpp>

#include <charconv>
#include <string>

namespace {

uint64_t number(rivet::Request& req, const char* name, uint64_t otherwise) {
    auto v = req.query(name);
    if (!v) return otherwise;
    uint64_t n = 0;
    auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
    if (ec != std::errc() || end != v->data() + v->size())
        throw rivet::HttpError(400, std::string(name) + " must be a number");
    return n;
}

rivet::HttpClientOptions options_from(rivet::Request& req) {
    rivet::HttpClientOptions o;
    o.max_response_bytes = number(req, "max", o.max_response_bytes);
    o.timeout = std::chrono::milliseconds(number(req, "timeout_ms", 10'000));
    o.connect_timeout = std::chrono::milliseconds(number(req, "connect_timeout_ms", 5'000));
    o.max_header_bytes = number(req, "max_header", o.max_header_bytes);
    o.max_redirects = unsigned(number(req, "redirects", 0));
    if (auto ca = req.query("ca")) o.ca_file = std::string(*ca);
    o.verify_peer = req.query("insecure").value_or("0") != "1";
    return o;
}

}  // namespace

int main(int argc, char** argv) {
    rivet::App app;
    app.get("/fetch", [](rivet::Request& req, rivet::Response& res) -> rivet::Task<> {
        rivet::ClientRequest call;
        call.url = std::string(req.query("url").value_or(""));
        call.method = std::string(req.query("method").value_or("GET"));
        if (auto body = req.query("body")) call.body = std::string(*body);
        call.options = options_from(req);
        rivet::HttpClient client;
        try {
            rivet::ClientResponse r = co_await client.send(std::move(call));
            nlohmann::json headers = nlohmann::json::array();
            for (auto& [n, v] : r.headers) headers.push_back({n, v});
            res.json({{"status", r.status},
                      {"reason", r.reason},
                      {"body", r.body},
                      {"url", r.url},
                      {"reused", r.reused_connection},
                      {"headers", headers}});
        } catch (const rivet::HttpClientError& e) {
            res.status(502).json({{"error", rivet::to_string(e.kind())}, {"message", e.what()}});
        }
    });
    app.get("/fetch_many", [](rivet::Request& req, rivet::Response& res) -> rivet::Task<> {
        const std::string url(req.query("url").value_or(""));
        const uint64_t n = number(req, "n", 10);
        rivet::HttpClient client(options_from(req));
        nlohmann::json statuses = nlohmann::json::array();
        int reused = 0;
        for (uint64_t i = 0; i < n; ++i) {
            auto r = co_await client.get(url);
            statuses.push_back(r.status);
            reused += r.reused_connection;
        }
        res.json({{"statuses", statuses}, {"reused", reused}});
    });
    // Two upstreams at once; and a deadline of the handler's own around one request.
    app.get("/fetch_both", [](rivet::Request& req, rivet::Response& res) -> rivet::Task<> {
        rivet::HttpClient client(options_from(req));
        auto [a, b] = co_await rivet::when_all(client.get(std::string(*req.query("a"))),
                                               client.get(std::string(*req.query("b"))));
        res.json({{"a", a.body}, {"b", b.body}});
    });
    app.get("/fetch_deadline", [](rivet::Request& req, rivet::Response& res) -> rivet::Task<> {
        rivet::HttpClient client(options_from(req));
        auto r = co_await rivet::with_timeout(client.get(std::string(*req.query("url"))),
                                              std::chrono::milliseconds(number(req, "ms", 100)));
        res.json({{"status", r.status}, {"body", r.body}});  // past the deadline: 504
    });
    // The body in pieces; `pause_ms` between reads (a slow reader), `stop_after` bytes (a reader
    // that gives up: the stream is dropped).
    app.get("/stream", [](rivet::Request& req, rivet::Response& res) -> rivet::Task<> {
        rivet::HttpClient client(options_from(req));
        const uint64_t pause = number(req, "pause_ms", 0),
                       stop_after = number(req, "stop_after", 0);
        try {
            // A named request: GCC 12 destroys a braced temporary inside co_await twice.
            rivet::ClientRequest call{.url = std::string(req.query("url").value_or(""))};
            rivet::ClientStream s = co_await client.stream(std::move(call));
            uint64_t pieces = 0, bytes = 0, largest = 0;
            std::string head;
            while (auto piece = co_await s.read()) {
                ++pieces;
                bytes += piece->size();
                largest = std::max<uint64_t>(largest, piece->size());
                if (head.size() < 16) head += piece->substr(0, 16 - head.size());
                if (stop_after && bytes >= stop_after) break;
                if (pause) co_await rivet::sleep(std::chrono::milliseconds(pause));
            }
            res.json({{"status", s.status},
                      {"pieces", pieces},
                      {"bytes", bytes},
                      {"largest", largest},
                      {"head", head}});
        } catch (const rivet::HttpClientError& e) {
            res.status(502).json({{"error", rivet::to_string(e.kind())}, {"message", e.what()}});
        }
    });
    app.get("/pool", [](rivet::Request&, rivet::Response& res) {
        auto s = rivet::HttpClient::pool_stats();
        res.json({{"opened", s.opened}, {"reused", s.reused}, {"idle", s.idle}});
    });
    app.run({.host = "127.0.0.1",
             .port = uint16_t(argc > 1 ? std::stoi(argv[1]) : 8080),
             .threads = 1,
             .workers = 1});
}
