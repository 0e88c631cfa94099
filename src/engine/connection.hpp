// Connection: one client socket and the HTTP/1.1 state machine that serves it.
//
// A connection is in one Phase at a time (below); what it reads, which timeout runs and when it
// closes follow from the phase. Reads land in the loop's shared receive buffer; every complete
// request in it is parsed and answered in place, and only an unfinished tail is copied into the
// connection's own buffer. A head is parsed once: when its body has not all arrived, the head
// (with a copy of its fields) and a BodyReader wait in `body_` while the body comes in.
//
// Answers leave in request order. Every answer (a handler's reply, a server-made one, or the
// place of one that comes later from another thread) goes through answer(): straight into the
// output when nothing before it is still owed, else into the queue of slots. Answers for one read
// go out with one write. An idle keep-alive connection owns no buffer.
#pragma once

#include <sys/socket.h>
#include <sys/types.h>
#include <cstdint>

#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/body_budget.hpp"
#include "engine/body_reader.hpp"
#include "engine/body_source.hpp"
#include "engine/exchange.hpp"
#include "engine/loop_stats.hpp"
#include "engine/reply.hpp"
#include "http/response_writer.hpp"
#include "net/loop.hpp"
#include "net/timer_wheel.hpp"
#include "tls/session.hpp"

namespace rivet::engine {

class IoThread;

class Connection final : public net::IoHandler, public net::Timer {
public:
    enum class Phase : uint8_t {
        // Accepted on a TLS listener: the handshake runs before anything is read as HTTP
        // (connection_tls.cpp); bytes that are not TLS end it (plain HTTP: 400).
        Handshake,
        // A trusted proxy may send a PROXY protocol header first (connection_proxy.cpp).
        ProxyHeader,
        Head,       // reading a request head (an idle keep-alive connection too)
        Body,       // the head is parsed, its body is arriving (body_)
        BodyWait,   // as Body, but the server's body budget is spent: not reading until bytes
                    // are given back (BodyBudget)
        Stream,     // the head is dispatched, its body is read as the handler asks (upload_)
        Paused,     // between two requests: reading waits until enough owed answers have left
        Closing,    // no more requests: what is owed is sent, then the connection closes
        Lingering,  // all sent and our side shut: input is read and dropped until EOF or timeout
        Closed,
    };

    // `tls`: accepted on a TLS listener (the loop's config().tls is the context).
    Connection(IoThread& owner, int fd, uint64_t id, const sockaddr_storage& peer,
               bool tls = false);
    ~Connection();
    // Right after the accept: serves what already arrived, then registers with the loop if the
    // connection is still open. May close (and retire) the connection before it returns.
    void start();

    uint64_t id() const { return id_; }
    int fd() const { return fd_; }
    Phase phase() const { return phase_; }
    bool idle() const;  // nothing read, nothing owed: safe to close during a drain
    std::string peer_address() const;
    PeerIp peer_ip() const;
    unsigned loop_index() const;
    TlsFacts tls_facts() const;

    // Called by Exchange.
    void respond(const http::RequestHead& head, const ReplyView& reply);
    void respond_simple(const http::RequestHead& head, int status, std::string_view body,
                        std::string_view extra_fields);
    Deferred defer(const http::RequestHead& head);
    // Called by IoThread when a deferred response arrives.
    void complete(uint64_t sequence, Reply&& reply);
    // Called by IoThread: the body budget may have room (BodyWait). False: still waiting.
    bool admit_waiting_body();
    // Called by IoThread for a kick posted by the connection itself: go on with buffered input.
    void kicked();
    // Called by BodySource (connection_stream.cpp): the handler asks for the next piece, or for
    // one that is ready now (true: a piece, the end or an error is in `s`).
    void upload_asked();
    bool upload_take(BodyStream& s);
    // Called by ErrorReply.
    void answer_error(const ReplyView* reply, int status, std::string_view text, uint64_t slot);

    void close_now();        // immediately, whatever is pending; cancels owed deferred answers
    void close_when_idle();  // during a drain: after what is in flight

private:
    // Unfinished input up to this size is re-read through the loop's shared buffer.
    static constexpr size_t kTailToShared = 16 * 1024;
    // File pieces or stream pumps sent in one flush; past it the body waits for the next
    // writable event, so one large answer cannot hold the loop.
    static constexpr uint8_t kBodyPiecesPerFlush = 4;

    // One request's answer, in the form its maker had it.
    struct Answer {
        enum class Kind : uint8_t { Full, Simple, Later } kind;
        const ReplyView* reply = nullptr;  // Full: a handler's answer
        int status = 0;                    // Simple: a server-made plain-text answer
        std::string_view body;
        std::string_view extra_fields;
    };
    // An answer waiting for the ones before it.
    struct Slot {
        uint64_t sequence;
        bool ready;  // false: its Deferred has not completed yet
        http::Framing framing;
        std::optional<Reply> reply;  // serialized when it leaves (see release_ready_slots)
        std::string bytes;           // or an answer already serialized
        std::shared_ptr<DeferredState> deferred;  // a Later answer's shared state
    };
    // What is owed beyond the output buffer; allocated on first use.
    struct Pending {
        std::deque<Slot> slots;
        uint64_t next_sequence = 1;
        std::shared_ptr<BodyProducer> stream;  // the body being streamed now
        FileBody file;                         // or the file being sent now
        bool stream_chunked = false;
        bool body_ends_connection = false;  // the stream or file is the connection's last answer
    };
    // Phase::Body: a parsed head waiting for its body. The views point into in_.
    struct BodyInProgress {
        BodyInProgress(const http::RequestHead& h, size_t bytes, BodyReader&& r);
        ~BodyInProgress();
        void rebase(const char* from, size_t len, const char* to);  // in_'s bytes moved

        http::RequestHead head;
        std::vector<http::Header> fields;  // the loop's field storage serves other connections
        size_t head_bytes;
        BodyReader reader;
        const void* tag = nullptr;     // BodyPlan::tag
        uint64_t wanted = 0;           // what the body may grow to: its share of the BodyBudget
        BodyBudget* budget = nullptr;  // set once `wanted` is reserved there
        bool continue_owed = false;    // 100 Continue waits for earlier answers to leave
    };

    void on_io(uint32_t events) override;
    void on_timeout() override;

    // TLS (connection_tls.cpp): every byte to and from the socket passes here. A TLS
    // connection's records are made from the plaintext output as the socket takes them; those
    // the socket did not take wait in the backlog, which empties before more are made.
    struct TlsState {
        explicit TlsState(std::shared_ptr<const tls::Context> context)
            : session(std::move(context)) {}
        tls::Session session;
        std::string backlog;
        bool first_read = true;
        bool failure_counted = false;  // a handshake failure is counted once, by reason
        bool peer_closed = false;      // close_notify came with the last bytes read
    };
    ssize_t receive(char* buf, size_t room);  // as read(2), plaintext; sets input_drained_
    ssize_t receive_tls(char* buf, size_t room);
    ssize_t send_bytes(const char* data, size_t len, int flags);  // as send(2), plaintext
    bool send_tls_backlog();  // false: some still waits (or the connection closed)
    void send_tls_output(std::string& out);
    void finish_handshake();
    void refuse_not_tls(const char* data);
    void tls_failed(TlsFailure why);
    void send_close_notify();
    // Output not yet taken by the socket: the plaintext, or TLS records made from it.
    bool unsent() const { return !out_.empty() || (tls_ && !tls_->backlog.empty()); }
    // Input read and not yet served: unfinished bytes, or part of a TLS record.
    bool input_waiting() const { return !in_.empty() || (tls_ && tls_->session.partial_record()); }

    // The PROXY protocol header (connection_proxy.cpp).
    void set_peer(const sockaddr_storage& peer);
    void expect_proxy_header(const sockaddr_storage& peer);
    size_t read_proxy_header(const char* data, size_t len);

    // Reading (connection.cpp).
    void on_readable();
    void on_peer_eof();
    size_t serve_input(const char* data, size_t len);
    size_t finish_body(const char* data, size_t len);
    void begin_body(const http::RequestHead& head, size_t head_bytes, BodyReader&& reader,
                    const BodyPlan& plan);
    bool reserve_body();
    void keep_unused(const char* data, size_t used, size_t len, bool head_restarts);
    void dispatch(const http::RequestHead& head, std::string_view body, const void* tag = nullptr,
                  BodyStream* stream = nullptr);
    // Refuses a request: the application shapes the answer, the connection closes after it.
    // `slot`: the streamed request's deferred answer that the refusal takes the place of.
    void fail(int status, const char* reason, const http::RequestHead* head = nullptr,
              uint64_t slot = 0);
    void serve_buffered();

    // Streamed bodies (connection_stream.cpp).
    void start_upload(const http::RequestHead& head, std::string_view head_bytes,
                      const BodyPlan& plan);
    size_t feed_upload(const char* data, size_t len);
    void end_upload();
    void fail_upload();
    void drop_upload(const char* reason);
    bool upload_open_for(const http::RequestHead& head) const {
        return upload_ && &upload_->head == &head;
    }
    bool answers_owed_before_upload() const;
    void end_reading();
    bool should_pause() const;
    void resume_reading();

    // Answering, in order (connection_answer.cpp).
    http::Framing framing_for(const http::RequestHead& head, bool close_requested) const;
    uint64_t answer(const Answer& a, const http::Framing& framing);
    void write_now(const Answer& a, const http::Framing& framing);
    bool write_out(const ReplyView& reply, http::Framing framing);  // true: it ends
    void release_ready_slots();
    void send_continue();
    void pump_stream();
    std::string& output();
    bool sending_body() const { return pending_ && (pending_->stream || pending_->file.owner); }
    // Answers still to send after what is in the output: queued slots, or a body in progress.
    bool owes() const { return pending_ && (!pending_->slots.empty() || sending_body()); }
    Pending& pending();

    // The socket side (connection_io.cpp).
    void flush();
    bool send_file_piece();  // false: the socket is full (or the connection closed)
    void after_flush();
    void begin_close();
    void cancel_deferred();  // tells the holders of unfinished Deferreds the connection is gone
    bool awaits_deferred() const;
    void drop_input();
    void update_interest();
    void arm_timer();

    IoThread& owner_;
    int fd_;
    uint64_t id_;
    Phase phase_ = Phase::Head;
    std::string in_;            // unread request bytes (empty while idle)
    std::string out_;           // unsent response bytes (empty while idle)
    size_t out_sent_ = 0;       // bytes at the front of out_ already sent
    http::HeadScan head_scan_;  // the unfinished head at the front of the input
    std::unique_ptr<BodyInProgress> body_;
    std::shared_ptr<BodyStream> upload_;  // Phase::Stream: the body the handler pulls
    std::unique_ptr<Pending> pending_;
    std::unique_ptr<TlsState> tls_;  // null: a plain connection

    uint8_t peer_family_ = 0;  // the peer's address, compact (no sockaddr_storage per connection)
    uint8_t peer_bytes_[16] = {};

    uint64_t head_started_ms_ = 0;    // when the first byte of the current request head arrived
    uint64_t write_progress_ms_ = 0;  // when a write last moved bytes (write timeout)
    uint32_t served_ = 0;
    uint8_t interest_ = 0;     // what the loop is asked to report (once registered_)
    bool registered_ = false;  // in the loop's epoll set: start() may finish without it
    uint8_t body_pieces_this_flush_ = 0;
    // Facts about the socket, whatever the phase.
    bool peer_eof_ = false;         // the client will send nothing more
    bool discarded_input_ = false;  // unread request bytes were dropped: closing must linger
    bool input_drained_ = false;    // while on_readable() runs: its read emptied the socket
    bool serving_ = false;  // inside serve_input(): a handler asking for a piece waits for it
    // While dispatch() runs: more input follows the request, in this read or in the socket (the
    // read filled the buffer, or input served from in_). When the server winds down, only the
    // last request says "Connection: close", so none that reached us goes unanswered.
    bool input_follows_ = false;
};

}  // namespace rivet::engine
