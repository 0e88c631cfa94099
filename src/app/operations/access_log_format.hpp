// One access log line from one answered request, in nginx's "combined" (the default, read by
// GoAccess and most log tools), "common", or JSON lines (with the request time in µs).
//   combined: 127.0.0.1 - - [31/Jan/2025:12:00:00 +0000] "GET /hello HTTP/1.1" 200 13 "-" "curl/8"
//   json:     {"time":"2025-01-31T12:00:00Z","remote_addr":"127.0.0.1","request":"GET /hello
//              HTTP/1.1","method":"GET","uri":"/hello","status":200,"body_bytes_sent":13,
//              "request_time_us":42,"referer":"","user_agent":"curl/8"}
//             (over TLS also ,"ssl_protocol":"TLSv1.3","ssl_cipher":"TLS_AES_128_GCM_SHA256",
//              "ssl_server_name":"example.com","ssl_session_reused":"." before the "}")
// Times are UTC. Values from the client are escaped as nginx does (\xHH) or as JSON demands.
#pragma once

#include <cstdint>
#include <ctime>
#include <string>
#include <string_view>

#include <rivet/operations.hpp>

namespace rivet::app {

// The end of a WebSocket session: its line follows the 101's, when the connection closes.
struct WebSocketSummary {
    uint64_t messages_in = 0, messages_out = 0, bytes_in = 0, bytes_out = 0;
    uint16_t close_code = 0;
};

struct AccessRecord {
    std::string_view client;  // the client's address, as text
    std::string_view method;  // empty: no request line could be read (a 400 from the parser)
    std::string_view target;
    int version_major = 1;  // 2: an HTTP/2 stream ("HTTP/2.0", as nginx writes it)
    int version_minor = 1;
    std::string_view referer;
    std::string_view user_agent;
    int status = 0;
    uint64_t body_bytes = 0;
    uint64_t micros = 0;  // from the handler's start to the answer
    // Over TLS (JSON lines only, with nginx's variable names: ssl_protocol, ssl_cipher,
    // ssl_server_name, ssl_session_reused "r" or "."); a plain request's line has none of them.
    bool secure = false;
    bool tls_resumed = false;
    std::string_view tls_version;  // "TLSv1.3"
    std::string_view tls_cipher;
    std::string_view tls_server_name;  // empty: no SNI
    // Set: the line closes a WebSocket session (micros: its whole duration), with its counts
    // (JSON: "websocket":{...}; the text formats: ws=close_code/messages_in/messages_out).
    const WebSocketSummary* websocket = nullptr;
};

// The formatted time of the current second, redone once a second per user.
class LogClock {
public:
    void update(time_t now);
    std::string_view clf() const { return {clf_, 26}; }  // 31/Jan/2025:12:00:00 +0000
    std::string_view iso() const { return {iso_, 20}; }  // 2025-01-31T12:00:00Z

private:
    time_t second_ = -1;
    char clf_[32] = {};
    char iso_[32] = {};
};

void format_access_line(LogFormat format, const AccessRecord& r, const LogClock& clock,
                        std::string& out);

}  // namespace rivet::app
