// Http1Session: the HTTP/1.1 state machine of one connection, on its transport
// (engine/session.hpp).
//
// A session is in one Phase at a time (below); what it reads, which timeout runs and when it
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

#include <cstdint>

#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/body_budget.hpp"
#include "engine/body_reader.hpp"
#include "engine/body_source.hpp"
#include "engine/connection.hpp"
#include "engine/exchange.hpp"
#include "engine/loop_stats.hpp"
#include "engine/pace.hpp"
#include "engine/reply.hpp"
#include "engine/send_pace.hpp"
#include "engine/session.hpp"
#include "http/response_writer.hpp"

namespace rivet::engine {

class IoThread;

class Http1Session final : public Session, public Responder, public BodyOwner {
public:
    enum class Phase : uint8_t {
        Head,       // reading a request head (an idle keep-alive connection too)
        Body,       // the head is parsed, its body is arriving (body_)
        BodyWait,   // as Body, but the server's body budget is spent: not reading until bytes
                    // are given back (BodyBudget)
        Stream,     // the head is dispatched, its body is read as the handler asks (upload_)
        Paused,     // between two requests: reading waits until enough owed answers have left
        Closing,    // no more requests: what is owed is sent, then the connection closes
        Switching,  // an answer handed the connection to another protocol (Reply::then): it
                    // leaves, then the next session starts with the bytes read after it
        Lingering,  // all sent and our side shut: input is read and dropped until EOF or timeout
        Closed,     // the connection closed, or handed off to another session
    };

    explicit Http1Session(Connection& connection);
    ~Http1Session() override;
    // From a per-thread stack of freed blocks (session_blocks.cpp): sessions come and go with
    // every idle period of a keep-alive connection.
    static void* operator new(size_t size);
    static void operator delete(void* block, size_t size);
    // Instead of reading: answers `status` and closes (plain HTTP on the TLS port).
    void refuse(int status, const char* reason);

    // Session.
    void start(std::string_view input) override;
    void on_readable() override;
    void on_writable() override { flush(); }
    void on_timeout() override;
    void on_closed() override;
    void close_when_idle() override;
    void complete(uint64_t sequence, Reply&& reply) override;
    bool admit_waiting_body() override;  // the body budget may have room (BodyWait)
    void kicked() override;              // a kick posted by this session: buffered input
    void resume_stream(const StreamLink* link) override;  // the stream's waker (stream.hpp)

    // Responder: Exchange's answers, and the refusals of fail().
    Deferred answer(const http::RequestHead* head, const Answer& answer) override;
    Connection& connection() override { return conn_; }

    // Called by BodySource (session_stream.cpp): the handler asks for the next piece, or for
    // one that is ready now (true: a piece, the end or an error is in `s`).
    void upload_asked() override;
    bool upload_take(BodyStream& s) override;

private:
    // Unfinished input up to this size is re-read through the loop's shared buffer.
    static constexpr size_t kTailToShared = 16 * 1024;
    // File pieces or stream pumps sent in one flush; past it the body waits for the next
    // writable event, so one large answer cannot hold the loop.
    static constexpr uint8_t kBodyPiecesPerFlush = 4;

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
        ~Pending();  // a stream still open: its wakers learn the connection is gone
        std::deque<Slot> slots;
        uint64_t next_sequence = 1;
        std::shared_ptr<StreamProducer> stream;  // the body being streamed now
        StreamWaker waker;                       // its link, given to every call of it
        FileBody file;                           // or the file being sent now
        // The stream's or file's trailers, sent in its last chunk (chunked HTTP/1.1 only):
        // read when the producer says Done, or when the file's last byte has left.
        std::shared_ptr<Trailers> trailers;
        bool stream_chunked = false;
        // The producer said Waiting: it is not called, and nothing is asked of epoll for it,
        // until its waker resumes it (or the drain ends it).
        bool stream_waiting = false;
        // While it waited the client sent bytes: not read before the stream ends, and no
        // longer watched (level-triggered readiness would report them on every turn).
        bool input_behind_stream = false;
        bool body_ends_connection = false;  // the stream or file is the connection's last answer
        SessionFactory then;                // Phase::Switching: who speaks next
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
        uint64_t wanted = 0;           // what the body may grow to: its share of the BodyBudget
        BodyBudget* budget = nullptr;  // set once `wanted` is reserved there
        bool continue_owed = false;    // 100 Continue waits for earlier answers to leave
        uint64_t wait_since_ms = 0;    // BodyWait: since when (bounded by the body timeout)
    };

    // Output not yet taken by the socket: the plaintext, or what the transport holds of it.
    bool unsent() const { return !out_.empty() || conn_.transport().backlog(); }
    // Input read and not yet served: unfinished bytes, or part of a TLS record.
    bool input_waiting() const { return !in_.empty() || conn_.transport().input_pending(); }
    void close_now() { conn_.close_now(); }
    bool idle() const;      // nothing read, nothing owed: safe to close during a drain
    bool may_rest() const;  // after_flush(): the connection can rest without this session

    // Reading (session_read.cpp).
    void on_peer_eof();
    size_t serve_input(const char* data, size_t len);
    size_t finish_body(const char* data, size_t len);
    void begin_body(const http::RequestHead& head, size_t head_bytes, BodyReader&& reader,
                    const BodyPlan& plan);
    bool reserve_body();
    void keep_unused(const char* data, size_t used, size_t len, bool head_restarts);
    void dispatch(const http::RequestHead& head, std::string_view body,
                  BodyStream* stream = nullptr);
    // Refuses a request: the application shapes the answer, the connection closes after it.
    // `slot`: the streamed request's deferred answer that the refusal takes the place of.
    void fail(int status, const char* reason, const http::RequestHead* head = nullptr,
              uint64_t slot = 0, unsigned retry_after_s = 0);
    // The body in progress (Body, BodyWait, Stream) is refused before it ended: the body
    // timeout or the minimum rate ran out (408), or its wait for the budget did (503).
    void refuse_body(int status, const char* reason, unsigned retry_after_s = 0);
    void serve_buffered();
    bool begins_http2(std::string_view input);

    // Streamed bodies (session_stream.cpp).
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

    // Answering, in order (session_answer.cpp).
    // `switching`: the answer hands the connection over (Reply::then).
    http::Framing framing_for(const http::RequestHead& head, bool close_requested,
                              bool switching = false) const;
    // Into the output now when nothing before it is owed, else into the queue; returns the
    // queued slot's sequence (0: written now).
    uint64_t enqueue(const Answer& a, const http::Framing& framing);
    Deferred defer(const http::RequestHead& head);
    void refuse_in_order(const Answer& a);
    void write_now(const Answer& a, const http::Framing& framing);
    bool write_out(const ReplyView& reply, http::Framing framing);  // true: it ends
    void release_ready_slots();
    void send_continue();
    void pump_stream();
    void start_stream(std::shared_ptr<StreamProducer> producer);
    // The last chunk (with the trailers when `complete`: the producer said Done, not a drain
    // or close cutting it short); answers queued behind it may go.
    void finish_stream(bool complete);
    void drop_stream();  // the producer is released, its wakers closed
    bool stream_waiting() const { return pending_ && pending_->stream && pending_->stream_waiting; }
    void watch_peer_while_waiting();
    std::string& output();
    bool sending_body() const { return pending_ && (pending_->stream || pending_->file.owner); }
    // Answers still to send after what is in the output: queued slots, or a body in progress.
    bool owes() const { return pending_ && (!pending_->slots.empty() || sending_body()); }
    // Bytes of answers made and not yet taken by the socket: the output, and the answers that
    // wait in the queue behind one still being worked on.
    uint64_t output_held() const;
    void charge_output();  // the BodyBudget holds output_held() (output_charged_)
    Pending& pending();

    // The socket side (session_io.cpp).
    void flush();
    bool send_file_piece();  // false: the socket is full (or the connection closed)
    void after_flush();
    void begin_close();
    void switch_session();
    void cancel_deferred();  // tells the holders of unfinished Deferreds the connection is gone
    bool awaits_deferred() const;
    void drop_input();
    void update_interest();
    void arm_timer();
    void arm_body_timer(uint64_t now);  // Body, or Stream with the handler asking
    void schedule_body_check(uint64_t now);
    bool body_timed() const;  // the timer that runs is the body's (arm_timer)
    void body_timer_ran(uint64_t now);
    bool sending() const { return unsent() || (sending_body() && !stream_waiting()); }
    void send_timer_ran(uint64_t now);

    Connection& conn_;
    IoThread& owner_;
    Phase phase_ = Phase::Head;
    std::string in_;            // unread request bytes (empty while idle)
    std::string out_;           // unsent response bytes (empty while idle)
    size_t out_sent_ = 0;       // bytes at the front of out_ already sent
    http::HeadScan head_scan_;  // the unfinished head at the front of the input
    std::unique_ptr<BodyInProgress> body_;
    std::shared_ptr<BodyStream> upload_;  // Phase::Stream: the body the handler pulls
    // Where Phase::Stream goes when the body ends: Head for the next request, or Closing when the
    // request is the connection's last (its answer closes; its own body is still read whole).
    Phase after_upload_ = Phase::Head;
    std::unique_ptr<Pending> pending_;

    uint64_t head_started_ms_ = 0;   // when the first byte of the current request head arrived
    uint64_t body_deadline_ms_ = 0;  // Body, Stream: the body timeout since the last read runs out
    Pace pace_;                      // Body, Stream: the body's minimum rate
    SendPace send_pace_;             // while sending(): how fast the client takes its answers
    uint64_t output_charged_ = 0;    // what the BodyBudget holds for this connection's output
    uint8_t body_pieces_this_flush_ = 0;
    // Facts about the socket, whatever the phase.
    bool peer_eof_ = false;         // the client will send nothing more
    bool discarded_input_ = false;  // unread request bytes were dropped: closing must linger
    bool serving_ = false;  // inside serve_input(): a handler asking for a piece waits for it
    // While dispatch() runs: more input follows the request, in this read or in the socket (the
    // read filled the buffer, or input served from in_). When the server winds down, only the
    // last request says "Connection: close", so none that reached us goes unanswered.
    bool input_follows_ = false;
};

}  // namespace rivet::engine
