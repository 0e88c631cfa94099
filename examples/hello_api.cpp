// A REST service with rivet in a few lines: build it with the project (`make`), run
// ./build/example_hello_api and try: curl localhost:8080/users/42
#include <rivet/rivet.hpp>

#include <cmath>

int main() {
    rivet::App app;
    app.get("/hello", [](rivet::Request&, rivet::Response& res) { res.text("Hello, World!"); });
    app.get("/users/:id", [](rivet::Request& req, rivet::Response& res) {
        res.json({{"id", req.param("id")}, {"name", "user " + std::string(req.param("id"))}});
    });
    app.post("/sum", [](rivet::Request& req, rivet::Response& res) {
        double total = 0;
        for (auto& x : req.json().at("numbers")) total += x.get<double>();
        res.json({{"sum", total}});
    });
    // CPU-heavy: runs on the worker pool, the I/O loops keep serving.
    app.get("/primes",
            [](rivet::Request& req, rivet::Response& res) {
                long limit = std::stol(req.query("below").value_or("100000")), count = 0;
                for (long n = 2; n < limit; ++n) {
                    bool prime = true;
                    for (long d = 2; d * d <= n && prime; ++d) prime = n % d != 0;
                    count += prime;
                }
                res.json({{"below", limit}, {"primes", count}});
            })
        .offload();
    app.run({.port = 8080});
}
