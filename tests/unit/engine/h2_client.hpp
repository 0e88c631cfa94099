// An HTTP/2 client for engine tests, on libnghttp2's client session, over the client end of an
// EngineHarness socketpair (h2c by prior knowledge: it starts with the preface).
//
// The test drives it from its own thread: request() and the other calls queue frames, flush()
// writes them, run_until() reads and answers (SETTINGS ACKs, WINDOW_UPDATEs) until a condition
// holds, the server closes, or a generous deadline passes. Nothing here sleeps: every wait is a
// poll on the socket. sync() is the client's barrier: a PING whose ACK says the server has
// processed everything sent before it (frames are handled in order) and flushed what that made.
#pragma once

#include <nghttp2/nghttp2.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine_harness.hpp"

namespace rivet::engine::testing {

using H2Fields = std::vector<std::pair<std::string, std::string>>;

// One stream as the client saw it.
struct H2Stream {
    int status = 0;
    H2Fields fields;    // the answer's fields (no pseudo-fields)
    H2Fields trailers;  // a trailing HEADERS frame's
    std::string body;
    bool ended = false;   // END_STREAM received
    bool closed = false;  // nghttp2 closed the stream (ended both ways, or reset)
    uint32_t close_code = 0;
    bool reset_by_server = false;  // RST_STREAM received
    uint32_t reset_code = 0;
    // The request body: what the data source has handed nghttp2 so far (sent at the next flush).
    std::string upload;
    size_t uploaded = 0;
    bool held = false;  // the body waits for release()

    std::string field(std::string_view name) const;
    std::string trailer(std::string_view name) const;
};

class H2Client {
public:
    // Queues the preface and the client's SETTINGS (`settings` beside nghttp2's defaults).
    explicit H2Client(Client& raw, std::vector<nghttp2_settings_entry> settings = {});
    ~H2Client();
    H2Client(const H2Client&) = delete;
    H2Client& operator=(const H2Client&) = delete;

    // Queues a request (":authority" t, ":scheme" http). Without `body`, END_STREAM is on the
    // HEADERS; with one, DATA frames follow as the window allows. `hold`: the body waits for
    // release() (HEADERS leave without END_STREAM first).
    int32_t request(std::string_view method, std::string_view path, const H2Fields& fields = {},
                    const std::string* body = nullptr, bool hold = false);
    void release(int32_t id);
    void reset(int32_t id, uint32_t code = NGHTTP2_CANCEL);
    void ping();

    // What nghttp2 has to send now, taken without writing it (the test writes it its own way).
    std::string take_output();
    // Writes everything nghttp2 has to send. False if the server closed.
    bool flush();
    // Reads, feeds and flushes until `done()`; false at EOF or after `timeout` without it.
    // `done` is looked at after every read and at least every 10 ms.
    bool run_until(const std::function<bool()>& done, Millis timeout = 5000ms);
    // PING, and run until its ACK: the server has handled everything sent before.
    bool sync(Millis timeout = 5000ms);
    // Run until the stream is closed.
    bool finish(int32_t id, Millis timeout = 5000ms);
    // Run until the server closes the connection.
    bool wait_eof(Millis timeout = 5000ms);

    H2Stream& stream(int32_t id) { return streams_[id]; }
    nghttp2_session* ng() { return ng_; }
    bool eof() const { return eof_; }
    bool goaway() const { return goaway_; }
    uint32_t goaway_code() const { return goaway_code_; }
    int32_t goaway_last_stream() const { return goaway_last_; }
    // The server's SETTINGS, as received (id -> value).
    const std::map<int32_t, uint32_t>& server_settings() const { return server_settings_; }
    int pings_acked() const { return pings_acked_; }
    int window_updates() const { return window_updates_; }
    int fd() const { return raw_.fd(); }

private:
    struct Callbacks;
    bool read_once(Millis wait);

    Client& raw_;
    nghttp2_session* ng_ = nullptr;
    std::map<int32_t, H2Stream> streams_;
    bool eof_ = false;
    bool goaway_ = false;
    uint32_t goaway_code_ = 0;
    int32_t goaway_last_ = -1;
    std::map<int32_t, uint32_t> server_settings_;
    int pings_acked_ = 0;
    int window_updates_ = 0;
};

}  // namespace rivet::engine::testing
