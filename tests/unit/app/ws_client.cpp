#include "ws_client.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>

namespace rivet::test {

using http::ws::Opcode;

uint16_t WsClient::Frame::close_code() const {
    if (payload.size() < 2) return http::ws::close_code::kNoStatus;
    return uint16_t((uint8_t(payload[0]) << 8) | uint8_t(payload[1]));
}

WsClient::WsClient(uint16_t port, const std::string& path, const std::string& fields, int rcvbuf) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    if (rcvbuf > 0) setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
        throw std::runtime_error("connect failed");
    std::string request = "GET " + path +
                          " HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                          "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n";
    if (fields.find("Sec-WebSocket-Version") == std::string::npos)
        request += "Sec-WebSocket-Version: 13\r\n";
    request += fields + "\r\n";
    send_raw(request);
    while (in_.find("\r\n\r\n") == std::string::npos)
        if (!fill(10)) break;
    size_t end = in_.find("\r\n\r\n");
    if (end == std::string::npos) return;
    head_ = in_.substr(0, end + 4);
    in_.erase(0, end + 4);
    if (!upgraded()) {  // a refusal: its body too, for the tests that read it
        size_t length = 0;
        if (auto at = head_.find("Content-Length: "); at != std::string::npos)
            length = std::stoul(head_.substr(at + 16));
        while (in_.size() < length && fill(10)) {
        }
        head_ += in_;
        in_.clear();
    }
}

WsClient::~WsClient() {
    if (fd_ >= 0) close(fd_);
}

void WsClient::send_raw(const std::string& bytes) {
    size_t sent = 0;
    while (sent < bytes.size()) {
        ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
        if (n <= 0) return;  // the server may have closed: the test reads what it said
        sent += size_t(n);
    }
}

void WsClient::send(Opcode opcode, const std::string& payload, bool fin) {
    std::string frame;
    http::ws::append_masked_frame(frame, opcode, payload, 0x5a17c3e1u, fin);
    send_raw(frame);
}

void WsClient::send_close(uint16_t code, const std::string& reason) {
    std::string payload;
    payload += char(code >> 8);
    payload += char(code & 0xff);
    payload += reason;
    send(Opcode::Close, payload);
}

bool WsClient::fill(int seconds) {
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, seconds * 1000) <= 0) return false;
    char buf[65536];
    ssize_t n = recv(fd_, buf, sizeof buf, 0);
    if (n <= 0) return false;
    in_.append(buf, size_t(n));
    return true;
}

std::optional<WsClient::Frame> WsClient::read(int seconds) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    http::ws::FrameRules rules;
    rules.expect_masked = false;
    rules.rsv1_allowed = true;
    rules.max_frame = uint64_t(1) << 40;
    for (;;) {
        http::ws::FrameHead head;
        http::ws::Violation v;
        auto status = http::ws::parse_frame_head(in_, rules, head, v);
        if (status == http::ws::HeadStatus::Refused) return std::nullopt;
        if (status == http::ws::HeadStatus::Complete &&
            in_.size() >= head.head_length + head.payload_length) {
            Frame f{head.opcode, head.rsv1, in_.substr(head.head_length, head.payload_length)};
            in_.erase(0, head.head_length + head.payload_length);
            return f;
        }
        auto left = std::chrono::duration_cast<std::chrono::seconds>(
                        deadline - std::chrono::steady_clock::now())
                        .count();
        if (left <= 0 || !fill(int(left))) return std::nullopt;
    }
}

std::optional<WsClient::Frame> WsClient::read_message(int seconds) {
    for (;;) {
        auto f = read(seconds);
        if (!f || !http::ws::is_control(f->opcode) || f->opcode == Opcode::Close) return f;
    }
}

bool WsClient::wait_eof(int seconds) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    char buf[65536];
    while (std::chrono::steady_clock::now() < deadline) {
        pollfd p{fd_, POLLIN, 0};
        if (poll(&p, 1, 1000) <= 0) continue;
        ssize_t n = recv(fd_, buf, sizeof buf, 0);
        if (n <= 0) {
            close(fd_);  // as a real client does once the server has closed
            fd_ = -1;
            return true;
        }
    }
    return false;
}

}  // namespace rivet::test
