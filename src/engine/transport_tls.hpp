// TlsTransport: TLS over the socket, through a tls::Session that never touches the socket or owns
// a buffer between calls. Ciphertext is read into the loop's TLS buffer and decrypted straight
// into the caller's; plaintext written is made into records in the loop's other TLS buffer and
// sent; records the socket did not take wait in the backlog, which empties before more are made.
// The handshake is the transport's (handshake()); the connection runs it before any session.
#pragma once

#include <memory>
#include <string>

#include "engine/loop_stats.hpp"
#include "engine/transport.hpp"
#include "tls/session.hpp"

namespace rivet::engine {

class TlsTransport final : public Transport {
public:
    TlsTransport(IoThread& owner, int fd, std::shared_ptr<const tls::Context> context);

    enum class Step : uint8_t {
        More,       // waiting for the client
        Done,       // finished: read() goes on with what followed the handshake
        Failed,     // ended (failure counted); an alert may have been sent
        PlainHttp,  // the first bytes are an HTTP request (plain_http_request() holds them)
    };
    // Reads what the client sent and goes on with the handshake.
    Step handshake();
    // Ciphertext that arrived before the transport began (what followed a PROXY header), read
    // before the socket.
    void prepend_input(std::string_view bytes) { pending_.append(bytes); }
    // Counts a failed handshake once, by reason (the connection knows of timeouts and resets).
    void count_failure(TlsFailure why);
    bool handshake_done() const { return session_.handshake_done(); }
    // Ciphertext read from the socket that no call has used yet: no readiness event announces it.
    bool unread_input() const { return !pending_.empty(); }

    using Transport::write;
    ssize_t read(char* buf, size_t room) override;
    ssize_t write(std::span<const std::string_view> pieces, bool more) override;
    ssize_t send_file(int file, uint64_t offset, size_t len) override;
    size_t file_piece() const override;
    bool backlog() const override { return !backlog_.empty(); }
    bool flush_backlog() override;
    bool input_pending() const override { return !pending_.empty() || session_.partial_record(); }
    bool peer_closed() const override { return peer_closed_; }
    void shutdown_write() override;
    TlsFacts tls_facts() const override;

private:
    // Reads ciphertext into the loop's buffer, or takes what waits in pending_: at most `want`.
    ssize_t read_cipher(std::string_view& in, size_t want);
    void used_pending(size_t used);
    void send_output(std::string& out);  // what a session call wrote, behind the backlog

    tls::Session session_;
    std::string backlog_;  // records the socket has not taken
    std::string pending_;  // ciphertext read but not yet given to the session
    bool from_pending_ = false;
    bool first_read_ = true;
    bool failure_counted_ = false;
    bool peer_closed_ = false;  // close_notify came with the last bytes read
};

}  // namespace rivet::engine
