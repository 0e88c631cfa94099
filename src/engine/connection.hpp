// Connection: one client socket and the HTTP/1.1 state machine that serves it.
//
// Reads land in the loop's shared receive buffer; every complete request in it is parsed and
// answered in place, and only an unfinished tail is copied into the connection's own buffer.
// Responses for one read go out with one write. An idle keep-alive connection owns no buffer.
#pragma once

#include <sys/socket.h>
#include <cstdint>

#include <deque>
#include <memory>
#include <optional>
#include <string>

#include "engine/exchange.hpp"
#include "http/chunked_decoder.hpp"
#include "http/response_writer.hpp"
#include "net/loop.hpp"
#include "net/timer_wheel.hpp"

namespace rivet::engine {

class IoThread;

class Connection final : public net::IoHandler, public net::Timer {
public:
    Connection(IoThread& owner, int fd, uint64_t id, const sockaddr_storage& peer);
    ~Connection();

    uint64_t id() const { return id_; }
    int fd() const { return fd_; }
    bool idle() const;  // nothing read, nothing owed: safe to close during a drain
    std::string peer_address() const;
    PeerIp peer_ip() const;
    unsigned loop_index() const;

    // Called by Exchange.
    void respond(const http::RequestHead& head, const http::Response& response);
    void respond_simple(const http::RequestHead& head, int status, std::string_view body,
                        std::string_view extra_fields);
    Deferred defer(const http::RequestHead& head);
    // Called by IoThread when a deferred response arrives.
    void complete(uint64_t sequence, http::Response&& response);

    void close_now();        // immediately, whatever is pending
    void close_when_idle();  // during a drain: after what is in flight

private:
    // Unfinished input up to this size is re-read through the loop's shared buffer.
    static constexpr size_t kTailToShared = 16 * 1024;

    void on_io(uint32_t events) override;
    void on_timeout() override;

    void on_readable();
    size_t process(const char* data, size_t len);
    bool serve_one(const char* data, size_t len, size_t& consumed);
    void dispatch(const http::RequestHead& head, std::string_view body);
    void fail(int status, const char* reason);

    http::Framing framing_for(const http::RequestHead& head, bool close_requested);
    std::string& output();
    bool in_order() const;  // nothing is waiting: an answer can go straight to the output
    void emit(std::string_view bytes, const http::Framing& framing);
    bool write_out(const http::Response& response, http::Framing framing);  // true: it ends
    void start_stream(std::shared_ptr<http::BodyProducer> stream, const http::Framing& framing);
    void maybe_send_continue(const http::RequestHead& head);
    bool should_pause() const;
    void release_ready_slots();
    void pump_stream();
    bool send_file_piece();  // false: the socket is full (or the connection closed)
    bool sending_body() const { return pending_ && (pending_->stream || pending_->file.file); }
    // Answers still to send after what is in the output: queued slots, or a body in progress.
    bool owes() const { return pending_ && (!pending_->slots.empty() || sending_body()); }
    void flush();
    void after_flush();
    void begin_close();
    void update_interest();
    void arm_timer();
    void resume_reading();

    IoThread& owner_;
    int fd_;
    uint64_t id_;
    std::string in_;   // unfinished request bytes (empty while idle)
    std::string out_;  // unsent response bytes (empty while idle)
    size_t out_sent_ = 0;  // bytes at the front of out_ already sent

    // Requests answered out of order wait here (only while a deferred response is outstanding).
    struct Slot {
        uint64_t sequence;
        bool ready;
        http::Framing framing;
        std::optional<http::Response> response;  // serialized when it leaves (see release)
        std::string bytes;                       // or a protocol answer, already serialized
    };
    struct Pending {
        std::deque<Slot> slots;
        uint64_t next_sequence = 1;
        http::ChunkedDecoder chunked;
        std::string chunked_body;
        size_t chunked_raw = 0;  // bytes after the head already fed to the decoder
        bool chunked_active = false;
        std::shared_ptr<http::BodyProducer> stream;  // the body being streamed now
        http::FileRange file;                        // or the file being sent now
        bool stream_chunked = false;
        bool body_ends_connection = false;  // the stream or file is the connection's last answer
    };
    std::unique_ptr<Pending> pending_;  // allocated on first use
    Pending& pending();

    uint8_t peer_family_ = 0;  // the peer's address, compact (no sockaddr_storage per connection)
    uint8_t peer_bytes_[16] = {};

    uint64_t head_started_ms_ = 0;    // when the first byte of the current request head arrived
    uint64_t write_progress_ms_ = 0;  // when a write last moved bytes (write timeout)
    uint32_t served_ = 0;
    uint8_t interest_ = 0;
    bool closing_ = false;  // answer no more requests; close once the output drains
    bool peer_eof_ = false;
    bool lingering_ = false;  // output done, write side shut, discarding input until EOF
    bool continue_sent_ = false;
    bool continue_owed_ = false;  // 100 Continue waits for earlier responses to leave
    bool reading_paused_ = false;
    bool awaiting_body_ = false;    // in_ holds a complete head whose body is still arriving
    bool discarded_input_ = false;  // unread request bytes were dropped: close must linger
    // While on_readable() runs: its read took all the socket held (a short read).
    bool input_drained_ = false;
    bool closed_ = false;
    // File pieces or stream pumps sent in this flush; past kBodyPiecesPerFlush the body waits
    // for the next writable event, so one large answer cannot hold the loop.
    static constexpr uint8_t kBodyPiecesPerFlush = 4;
    uint8_t body_pieces_this_flush_ = 0;
};

}  // namespace rivet::engine
