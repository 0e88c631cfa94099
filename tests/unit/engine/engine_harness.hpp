// A test harness for the engine: one IoThread on its own thread with a scriptable Application,
// and clients that speak raw bytes to it over AF_UNIX socketpairs.
//
// Only stable interfaces are used (IoThread, Application, Exchange, Deferred, ServerConfig), so
// the tests keep compiling while Connection's internals change. AF_UNIX rather than TCP: the
// engine makes no TCP-only call on an accepted socket (TCP_NODELAY comes from the listener, and
// shutdown, FIONREAD and sendfile all work on Unix sockets), and a socketpair needs no port.
// Every read waits with a poll timeout, so a broken engine fails a test instead of hanging it.
#pragma once

#include <sys/socket.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <rivet/response.hpp>

#include "app/server_options.hpp"  // rivet::Response in the engine's terms (view_of, reply_of)
#include "engine/exchange.hpp"
#include "engine/io_thread.hpp"
#include "engine/server_config.hpp"

namespace rivet::engine::testing {

using namespace std::chrono_literals;
using Millis = std::chrono::milliseconds;

// One response as the client saw it.
struct ParsedResponse {
    int status = 0;
    std::string head;  // status line and fields, up to and including the empty line
    std::string body;  // de-chunked when the response was chunked
    bool chunked = false;
    std::string trailers;  // the last chunk's trailer fields, "name: value\r\n" each
    std::string raw;       // the bytes exactly as received

    // The value of a field (case-sensitive name, as the engine writes them); "" if absent.
    std::string field(std::string_view name) const;
    // raw without the Date field, whose value changes every second: for exact-byte asserts.
    std::string raw_without_date() const;
};

// Splits `bytes` into complete responses. `head_only[i]` marks a response to a HEAD request
// (fields announce a body that is not sent). With `eof`, a response framed by the close takes
// the rest. `rest` receives the bytes of an unfinished response, if any.
std::vector<ParsedResponse> parse_responses(std::string_view bytes,
                                            const std::vector<bool>& head_only = {},
                                            bool eof = false, std::string* rest = nullptr);

// The client end of a socketpair whose other end the engine serves.
class Client {
public:
    explicit Client(int fd) : fd_(fd) {}
    ~Client();
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;

    int fd() const { return fd_; }
    void send(std::string_view bytes);
    // Sends `bytes` in pieces of `piece` bytes with `pause` between them, so that the engine
    // sees them in separate reads.
    void send_in_pieces(std::string_view bytes, size_t piece, Millis pause = 2ms);
    void shutdown_write();

    // Reads until `n` complete responses arrived (1xx interim answers count), EOF, or
    // `timeout`. What was read is kept in received(); the responses returned are all parsed so
    // far. `head_only` as for parse_responses.
    std::vector<ParsedResponse> read_responses(size_t n, Millis timeout = 2000ms,
                                               const std::vector<bool>& head_only = {});
    // Reads until `needle` appears in received() (true) or EOF/timeout (false).
    bool read_until(std::string_view needle, Millis timeout = 2000ms);
    // Reads until the engine closes (true) or `timeout` (false); bytes go to received().
    bool wait_eof(Millis timeout = 2000ms);
    // Reads whatever arrives within `window` (for "nothing more was sent" checks).
    std::string read_for(Millis window);
    // How many read calls returned data so far (for "answered with one write" checks).
    int reads() const { return reads_; }

    const std::string& received() const { return received_; }
    bool eof() const { return eof_; }
    void clear() { received_.clear(); }

private:
    // One poll+read of at most `wait`: false on timeout or EOF.
    bool read_once(Millis wait);

    int fd_;
    std::string received_;
    bool eof_ = false;
    int reads_ = 0;
};

// The application the engine serves: `handler` runs on the loop's thread for each request.
// Without one, it echoes "<method> <target> body=<body>" with 200.
class TestApp final : public Application {
public:
    using Handler = std::function<void(Exchange&)>;
    using Planner = std::function<void(const http::RequestHead&, BodyPlan&)>;
    using ErrorShaper = std::function<void(const ProtocolError&, ErrorReply&)>;

    void serve(Exchange& exchange) override;
    void plan_body(const http::RequestHead& head, BodyPlan& plan) override;
    void on_protocol_error(unsigned loop, const PeerIp& peer, int status) override;
    void answer_protocol_error(const ProtocolError& error, ErrorReply& reply) override;

    void set_handler(Handler h) { handler_ = std::move(h); }  // before the loop starts
    void set_planner(Planner p) { planner_ = std::move(p); }  // likewise
    void set_error_shaper(ErrorShaper s) { shaper_ = std::move(s); }
    // Keeps a Deferred for the test to complete (from the loop's thread, inside a handler).
    void keep(Deferred d);
    // Waits until `n` Deferreds are kept, then hands them over in the order they were made.
    std::vector<Deferred> take_deferred(size_t n, Millis timeout = 2000ms);
    // Waits until serve() was called `n` times in all.
    bool wait_served(size_t n, Millis timeout = 2000ms);
    std::vector<std::string> bodies() const;  // each request's body, in order
    std::vector<int> protocol_errors() const;
    void drop_deferred();  // answers any kept ones with 500 (before the loop stops)

private:
    Handler handler_;
    Planner planner_;
    ErrorShaper shaper_;
    mutable std::mutex mu_;
    std::condition_variable cv_;
    size_t served_ = 0;
    std::vector<std::string> bodies_;
    std::vector<int> errors_;
    std::vector<Deferred> kept_;
};

// One IoThread without a listener, started at construction, drained and joined at destruction.
class EngineHarness {
public:
    explicit EngineHarness(ServerConfig config = {}, TestApp::Handler handler = {},
                           TestApp::Planner planner = {}, TestApp::ErrorShaper shaper = {});
    ~EngineHarness();

    // A new connection: the engine adopts one end of a socketpair, the client gets the other.
    // `server_sndbuf`, when set, shrinks the engine side's send buffer (write-timeout tests).
    // `peer` is what the engine is told about the client's address (AF_UNIX when null).
    // `tls`: the engine serves it as a TLS listener's connection (config.tls must be set).
    std::unique_ptr<Client> connect(int server_sndbuf = 0, const sockaddr_storage* peer = nullptr,
                                    bool tls = false);

    // Waits until everything posted to the loop before this call has run (false on timeout).
    bool sync(Millis timeout = 2000ms);

    TestApp& app() { return app_; }
    IoThread& io() { return *io_; }

private:
    TestApp app_;
    std::unique_ptr<IoThread> io_;
};

// A request with Host and the given extra fields and body (Content-Length added for a body).
std::string request(std::string_view method, std::string_view target, std::string_view fields = {},
                    std::string_view body = {});
// A text response by value, for Deferred::complete (Response's setters return lvalues).
inline rivet::Response reply(std::string_view text, int status = 200) {
    rivet::Response r(status);
    r.text(text);
    return r;
}

// An IPv4 peer address, for EngineHarness::connect.
sockaddr_storage v4_peer(const char* ip);

inline std::string get(std::string_view target, std::string_view fields = {}) {
    return request("GET", target, fields);
}

}  // namespace rivet::engine::testing
