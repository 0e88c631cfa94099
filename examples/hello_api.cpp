// A REST service with rivet in a few lines: build it with the project (`make`), run
// ./build/example_hello_api [port [cert.pem key.pem]] and try: curl localhost:8080/users/42
// (with a certificate and its key, HTTPS too: curl --cacert cert.pem https://localhost:8443/hello)
#include <rivet/rivet.hpp>

#include <charconv>
#include <cmath>

int main(int argc, char** argv) {
    rivet::App app;
    app.get("/hello", [](rivet::Request&, rivet::Response& res) { res.text("Hello, World!"); });
    app.get("/users/:id", [](rivet::Request& req, rivet::Response& res) {
        res.json({{"id", req.param("id")}, {"name", "user " + std::string(req.param("id"))}});
    });
    app.post("/sum", [](rivet::Request& req, rivet::Response& res) {
        auto body = req.json();  // not JSON: the client gets a 400 saying where
        if (!body.is_object() || !body["numbers"].is_array())
            throw rivet::HttpError(400, R"(send {"numbers": [1, 2, 3]})");
        double total = 0;
        for (auto& x : body["numbers"]) {
            if (!x.is_number()) throw rivet::HttpError(400, "numbers must hold numbers only");
            total += x.get<double>();
        }
        res.json({{"sum", total}});
    });
    // CPU-heavy: runs on the worker pool, the I/O loops keep serving.
    app.get("/primes",
            [](rivet::Request& req, rivet::Response& res) {
                std::string below = req.query("below").value_or("100000");
                long limit = 0, count = 0;
                auto [end, ec] = std::from_chars(below.data(), below.data() + below.size(), limit);
                if (ec != std::errc() || end != below.data() + below.size() || limit < 0 ||
                    limit > 10'000'000)
                    throw rivet::HttpError(400, "below must be a whole number up to 10000000");
                for (long n = 2; n < limit; ++n) {
                    bool prime = true;
                    for (long d = 2; d * d <= n && prime; ++d) prime = n % d != 0;
                    count += prime;
                }
                res.json({{"below", limit}, {"primes", count}});
            })
        .offload();
    rivet::RunOptions options{.port = uint16_t(argc > 1 ? std::stoi(argv[1]) : 8080)};
    if (argc > 3) options.tls.certificates = {{argv[2], argv[3]}};  // rivet/tls.hpp; port 8443
    app.run(options);
}
