// Readiness that follows a dependency: the service answers /hello, and is ready only while the
// database it needs (here any TCP service, checked by connecting) accepts connections. While it
// does not, /readyz answers 503 so balancers and Kubernetes send traffic elsewhere; /livez stays
// 200, since restarting this process would not bring the database back.
//   ./build/example_readiness [port [dependency_port [drain_grace_ms]]]
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include <rivet/rivet.hpp>

namespace {

bool accepts_connections(uint16_t port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bool ok = connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
    close(fd);
    return ok;
}

}  // namespace

int main(int argc, char** argv) {
    rivet::App app;
    app.get("/hello", [](rivet::Request&, rivet::Response& res) { res.text("Hello, World!"); });

    auto dependency = uint16_t(argc > 2 ? std::stoi(argv[2]) : 5432);
    app.set_ready(accepts_connections(dependency));  // before the first health check
    // Checked every 100 ms on a thread of its own; joined when main returns, after run().
    std::jthread watcher([&app, dependency](std::stop_token stop) {
        while (!stop.stop_requested()) {
            app.set_ready(accepts_connections(dependency));
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
    });

    rivet::RunOptions options{.port = uint16_t(argc > 1 ? std::stoi(argv[1]) : 8080)};
    options.ops.admin.health = true;  // /livez, /readyz, /healthz (off by default in the library)
    options.timeouts.drain_grace_ms = argc > 3 ? std::stoull(argv[3]) : 5'000;
    app.run(options);
}
