#include "server/demo_routes.hpp"

#include <gmp.h>

#include <rivet/compression.hpp>

#include <cmath>

#include "app/request/query.hpp"
#include "http/request_parser.hpp"
#include "server/number_input.hpp"

namespace rivet::server {

namespace {

constexpr uint64_t kMaxFibonacci = 1'000'000;
constexpr uint64_t kInlineFibonacci = 20'000;  // above this, F(N) runs on the worker pool
constexpr uint64_t kDefaultCalcTerms = 5'000'000;
constexpr uint64_t kMaxCalcTerms = 50'000'000;
constexpr uint64_t kDefaultWork = 5'000'000;
constexpr uint64_t kMaxWork = 1'000'000'000;
// A body above this is parsed on the worker pool (/json, POST /fibonacci), never on the loop.
constexpr size_t kInlineJsonBytes = 64 * 1024;

void bad_request(Response& res, std::string_view message) {
    res.status(400).json({{"error", message}});
}

std::string fibonacci(uint64_t n) {
    mpz_t f;
    mpz_init(f);
    mpz_fib_ui(f, n);
    std::string digits(mpz_sizeinbase(f, 10) + 1, '\0');
    mpz_get_str(digits.data(), 10, f);
    mpz_clear(f);
    digits.resize(std::char_traits<char>::length(digits.c_str()));
    return digits;
}

// N from ?number= or ?n= (GET), or from a JSON, form or bare body (POST).
Parsed<uint64_t> fibonacci_input(const Request& req) {
    if (req.method() != Method::Post) {
        auto n = req.query("number");
        if (!n) n = req.query("n");
        if (!n) return {std::nullopt, "missing number: use /fibonacci?number=N"};
        return parse_count(*n, kMaxFibonacci, "number");
    }
    std::string_view body = req.body();
    size_t first = body.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos)
        return {std::nullopt, "missing number: send {\"number\": N}, number=N or N"};
    if (body[first] == '{') {
        // Within req.json()'s limits: malformed, too deep or too large throws HttpError.
        auto doc = req.json();
        if (!doc.is_object()) return {std::nullopt, "the JSON body must be an object"};
        if (!doc.contains("number")) return {std::nullopt, "missing number in the JSON body"};
        return parse_json_count(doc["number"], kMaxFibonacci, "number");
    }
    if (body.find('=') != std::string_view::npos) {
        auto n = app::form_value(body, "number");
        if (!n) n = app::form_value(body, "n");
        if (!n) return {std::nullopt, "missing number in the form body"};
        return parse_count(*n, kMaxFibonacci, "number");
    }
    return parse_count(body, kMaxFibonacci, "number");
}

void fibonacci_handler(Request& req, Response& res) {
    auto n = fibonacci_input(req);
    if (!n.value) return bad_request(res, n.error);
    res.json({{"number", *n.value}, {"fibonacci", fibonacci(*n.value)}});
}

// Seed 000's "Test 2": arithmetic on the request's `value`, answered as a JSON document.
void json_handler(Request& req, Response& res) {
    nlohmann::json doc = req.json();  // malformed: HttpError(400), answered by the framework
    if (!doc.is_object()) return bad_request(res, "the body must be a JSON object");
    int64_t v = 0;
    if (doc.contains("value")) {
        const auto& value = doc["value"];
        // nlohmann keeps a number above INT64_MAX as unsigned and one beyond 64 bits as a
        // double: each is compared as what it is (as int64_t, 2^64 - 1 would read as -1).
        if (value.is_number_unsigned()) {
            if (value.get<uint64_t>() > uint64_t(INT32_MAX))
                return bad_request(res, "value is out of range");
        } else if (value.is_number_float()) {
            const double d = value.get<double>();
            if (d > INT32_MAX || d < INT32_MIN) return bad_request(res, "value is out of range");
        }
        if (!value.is_number_integer()) return bad_request(res, "value must be an integer");
        v = value.get<int64_t>();
        if (v > INT32_MAX || v < INT32_MIN) return bad_request(res, "value is out of range");
    }
    res.json({{"plus", v + 20},
              {"minus", v - 69},
              {"plus_float", double(v) + 3.14},
              {"list", {v, v * 2, double(v) * 3.14}},
              {"object",
               {{"item1", v},
                {"item2", true},
                {"item3", double(v) - 3.14},
                {"anotherList", {v - 1, double(v) - 2.5, "somestr", false, v}}}}});
}

// Seed 000's "Test 3": the ln(1+x) series, deliberately computed the slow way.
void calc_handler(Request& req, Response& res) {
    auto value_text = req.query("value");
    if (!value_text) return bad_request(res, "missing value: use /calc?value=X with -1 < X <= 1");
    auto x = parse_real(*value_text, "value");
    if (!x.value) return bad_request(res, x.error);
    if (*x.value <= -1 || *x.value > 1) return bad_request(res, "value must be in (-1, 1]");
    uint64_t terms = kDefaultCalcTerms;
    if (auto t = req.query("terms")) {
        auto parsed = parse_count(*t, kMaxCalcTerms, "terms");
        if (!parsed.value) return bad_request(res, parsed.error);
        terms = *parsed.value;
    }
    double sum = 0;
    for (uint64_t i = 0; i < terms; ++i)
        sum += std::pow(-1.0, double(i)) * std::pow(*x.value, double(i) + 1.0) / (double(i) + 1.0);
    res.json({{"value", *x.value}, {"terms", terms}, {"result", sum}});
}

// Seed 002's simulated CPU work: a loop of n operations the compiler cannot remove.
void work_handler(Request& req, Response& res) {
    uint64_t n = kDefaultWork;
    if (auto text = req.query("n")) {
        auto parsed = parse_count(*text, kMaxWork, "n");
        if (!parsed.value) return bad_request(res, parsed.error);
        n = *parsed.value;
    }
    volatile uint64_t acc = 0;
    for (uint64_t i = 0; i < n; ++i) acc = acc + i * 2654435761u;
    res.json({{"n", n}, {"result", uint64_t(acc)}});
}

void echo_get(Request& req, Response& res) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [k, v] : req.query_params()) {
        if (!out.contains(k)) {
            out[k] = v;
        } else {
            // A repeated key keeps every value, in order.
            if (!out[k].is_array()) out[k] = nlohmann::json::array({out[k]});
            out[k].push_back(v);
        }
    }
    res.json(out);
}

void echo_post(Request& req, Response& res) {
    std::string_view type = req.header("Content-Type");
    res.body(req.body(), type.empty() ? "application/octet-stream" : type);
}

void headers_handler(Request& req, Response& res) {
    std::string out;
    for (const auto& h : req.headers()) {
        out.append(h.name);
        out.append(": ");
        out.append(h.value);
        out.push_back('\n');
    }
    res.text(out);
}

void cookies_handler(Request& req, Response& res) {
    std::string out;
    for (const auto& h : req.headers()) {
        if (!http::iequals(h.name, "Cookie")) continue;
        std::string_view rest = h.value;
        while (!rest.empty()) {
            size_t end = rest.find(';');
            std::string_view pair = rest.substr(0, end);
            rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 1);
            while (!pair.empty() && pair.front() == ' ') pair.remove_prefix(1);
            while (!pair.empty() && pair.back() == ' ') pair.remove_suffix(1);
            if (pair.empty() || pair.find('=') == std::string_view::npos) continue;
            out.append(pair);
            out.push_back('\n');
        }
    }
    res.text(out);
}

}  // namespace

void add_demo_routes(App& app, const DemoOptions& options) {
    // Every answer below, the files' and the framework's own included, leaves through it.
    if (options.compression) app.use(compression());
    app.get("/hello", [](Request&, Response& res) { res.text("Hello, World!"); });
    // GET /healthz is the App's own admin endpoint (metrics.health), so it can be turned off
    // or moved to the admin port.
    app.get("/echo", echo_get);
    app.post("/echo", echo_post);
    const bool offload = !options.inline_heavy;
    auto heavy_fibonacci = [offload](const Request& req) {
        if (!offload) return false;
        // No number needs a large body: one is parsed (and refused) on a worker, as /json's are.
        if (req.body().size() > kInlineJsonBytes) return true;
        auto n = fibonacci_input(req);
        return n.value && *n.value > kInlineFibonacci;
    };
    app.get("/fibonacci", fibonacci_handler).offload_when(heavy_fibonacci);
    app.post("/fibonacci", fibonacci_handler).offload_when(heavy_fibonacci);
    // Parsing is linear in the body but not free (an 8 MiB document held a loop ~140 ms;
    // req.json() now refuses over 1 MiB): large documents are parsed on a worker so the loop's
    // other connections are not held.
    app.post("/json", json_handler).offload_when([offload](const Request& req) {
        return offload && req.body().size() > kInlineJsonBytes;
    });
    app.get("/calc", calc_handler).offload(offload);
    app.get("/work", work_handler).offload(offload);
    app.get("/headers", headers_handler);
    app.get("/cookies", cookies_handler);
    add_waiting_routes(app);
    add_form_routes(app);
    add_event_routes(app);
    add_push_routes(app);
    add_trailer_routes(app);

    // Everything else under / is a file of the root (the demo page is its index.html); the
    // routes above win over files of the same name.
    app.serve_static("/", options.root, options.files);
}

}  // namespace rivet::server
