// A blocking WebSocket client for the framework's tests on real sockets: the handshake, masked
// frames out (rivet's codec writes them), whole frames in, read with generous deadlines.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "http/websocket/frame.hpp"

namespace rivet::test {

class WsClient {
public:
    struct Frame {
        http::ws::Opcode opcode = http::ws::Opcode::Continuation;
        bool rsv1 = false;
        std::string payload;
        uint16_t close_code() const;  // of a Close frame; 1005 without one
    };

    // Connects and sends the upgrade for `path` with `fields` ("Name: value\r\n"...) added;
    // `rcvbuf`: the socket's receive buffer (0: the kernel's), small for slow-reader tests.
    WsClient(uint16_t port, const std::string& path, const std::string& fields = "",
             int rcvbuf = 0);
    ~WsClient();
    WsClient(const WsClient&) = delete;
    WsClient& operator=(const WsClient&) = delete;

    const std::string& response_head() const { return head_; }
    bool upgraded() const { return head_.rfind("HTTP/1.1 101 ", 0) == 0; }

    void send(http::ws::Opcode opcode, const std::string& payload, bool fin = true);
    void send_text(const std::string& payload) { send(http::ws::Opcode::Text, payload); }
    void send_raw(const std::string& bytes);
    void send_close(uint16_t code, const std::string& reason = "");
    // The next frame, or none when the connection ended or nothing came for `seconds`.
    std::optional<Frame> read(int seconds = 10);
    // Reads until a data frame; control frames before it are skipped.
    std::optional<Frame> read_message(int seconds = 10);
    // Reads (dropping frames) until the peer closes the TCP connection: true when it did (the
    // socket is then closed too).
    bool wait_eof(int seconds = 10);

private:
    bool fill(int seconds);
    int fd_ = -1;
    std::string head_;
    std::string in_;
};

}  // namespace rivet::test
