// cpp-httplib (Debian libcpp-httplib-dev) as a benchmark peer: thread per connection.
//   g++ -O2 -std=c++17 -pthread $(pkg-config --cflags cpp-httplib) -o httplib_hello \
//       bench/peers/httplib_hello.cpp $(pkg-config --libs cpp-httplib)
//   httplib_hello PORT [ROOT]
// GET /hello -> "Hello, World!"; POST /echo -> the body back; POST /json -> rivet's /json answer;
// GET /calc?value=X&terms=T -> rivet's ln(1+x) series (for make bench-models); files under ROOT.
// Every accepted connection gets its own thread for its whole life (the task queue below), with
// keep-alive unlimited: cpp-httplib's default is a fixed pool of 8 threads and 5 requests per
// connection, which would measure reconnects instead of the model.
// Debian ships cpp-httplib as a compiled library (poll(), listen backlog 5, no TCP_NODELAY):
// the backlog is raised after binding and TCP_NODELAY set on the listening socket, which
// accepted sockets inherit on Linux.
#include <httplib.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <climits>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <thread>

struct ThreadPerConnection : httplib::TaskQueue {
    void enqueue(std::function<void()> fn) override { std::thread(std::move(fn)).detach(); }
    void shutdown() override {}
};

int main(int argc, char** argv) {
    int port = argc > 1 ? std::atoi(argv[1]) : 18099;
    httplib::Server svr;
    svr.new_task_queue = [] { return new ThreadPerConnection; };
    svr.set_keep_alive_max_count(INT_MAX);
    svr.set_keep_alive_timeout(75);
    svr.set_read_timeout(75);
    svr.Get("/hello", [](const httplib::Request&, httplib::Response& res) {
        res.set_content("Hello, World!", "text/plain");
    });
    svr.Post("/echo", [](const httplib::Request& req, httplib::Response& res) {
        res.set_content(req.body, req.get_header_value("Content-Type").c_str());
    });
    svr.Post("/json", [](const httplib::Request& req, httplib::Response& res) {
        auto doc = nlohmann::json::parse(req.body, nullptr, false);
        if (doc.is_discarded() || !doc.is_object() || !doc.value("value", nlohmann::json(0)).is_number_integer()) {
            res.status = 400;
            res.set_content(R"({"error": "bad JSON"})", "application/json");
            return;
        }
        int64_t v = doc.value("value", int64_t(0));
        nlohmann::json out = {{"plus", v + 20}, {"minus", v - 69}, {"plus_float", double(v) + 3.14},
                              {"list", {v, v * 2, double(v) * 3.14}},
                              {"object", {{"item1", v}, {"item2", true}, {"item3", double(v) - 3.14},
                                          {"anotherList", {v - 1, double(v) - 2.5, "somestr", false, v}}}}};
        res.set_content(out.dump(), "application/json");
    });
    svr.Get("/calc", [](const httplib::Request& req, httplib::Response& res) {  // rivet's calc_handler
        double x = std::atof(req.get_param_value("value").c_str());
        uint64_t terms = req.has_param("terms") ? std::strtoull(req.get_param_value("terms").c_str(), nullptr, 10) : 5000000;
        double sum = 0;
        for (uint64_t i = 0; i < terms; ++i)
            sum += std::pow(-1.0, double(i)) * std::pow(x, double(i) + 1.0) / (double(i) + 1.0);
        res.set_content(nlohmann::json{{"value", x}, {"terms", terms}, {"result", sum}}.dump(), "application/json");
    });
    if (argc > 2) svr.set_mount_point("/", argv[2]);
    int listener = -1;
    svr.set_socket_options([&listener](socket_t sock) {
        int one = 1;
        setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        listener = sock;
    });
    if (!svr.bind_to_port("127.0.0.1", port)) return 1;
    if (listen(listener, 4096) != 0) return 1;  // same backlog as rivet, nginx and the floor
    return svr.listen_after_bind() ? 0 : 1;
}
