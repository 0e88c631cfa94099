// Http2Stream: one request and its answer on an HTTP/2 connection. To the application it is what
// an HTTP/1.1 connection is: the Responder its Exchange answers through, and the owner of its
// streamed body, so handlers, middleware, deferred answers and body streams run unchanged.
//
// Input: the header list arrives (Input::Headers), then the body if any (Body, or BodyWait while
// the server's body budget is spent), and the request is Complete. Output: the answer is Owed,
// or Later (a Deferred), then Sending (submitted to nghttp2, whose data source reads the body
// from here) and Sent.
#pragma once

#include <nghttp2/nghttp2.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/body_source.hpp"
#include "engine/exchange.hpp"
#include "engine/pace.hpp"
#include "engine/reply.hpp"
#include "engine/stream.hpp"
#include "http/http2/request_head.hpp"

namespace rivet::engine {

class Http2Session;

class Http2Stream final : public Responder, public BodyOwner {
public:
    enum class Input : uint8_t {
        Headers,   // the header list is arriving
        Body,      // the request was planned; its body is arriving
        BodyWait,  // as Body, buffered, but the body budget is spent: its bytes are not consumed
        Complete,  // END_STREAM came (or the request was refused: the rest is dropped)
    };
    enum class Output : uint8_t {
        Owed,     // nothing answered yet
        Later,    // a Deferred holds the right to answer
        Sending,  // the answer is submitted; its body leaves as the window allows
        Sent,     // the last frame has left (or the stream was reset)
    };

    Http2Stream(Http2Session& session, int32_t id);
    ~Http2Stream();
    // Streams come and go by the thousand: a closed one's object (and its buffers' capacity)
    // serves the next stream its loop thread opens, on whichever connection.
    static std::unique_ptr<Http2Stream> make(Http2Session& session, int32_t id);
    static void recycle(std::unique_ptr<Http2Stream> stream);

    // Responder.
    Deferred answer(const http::RequestHead* head, const Answer& answer) override;
    Connection& connection() override;
    // BodyOwner.
    void upload_asked() override;
    bool upload_take(BodyStream& s) override;

    // --- for the session (stream.cpp: the request) ---
    void add_field(std::string_view name, std::string_view value) { request_.add(name, value); }
    size_t header_list_size() const { return request_.list_size() + uncounted_; }
    void add_uncounted(size_t bytes) {
        uncounted_ += bytes + http::http2::RequestHeadBuilder::kFieldOverhead;
    }
    // The header list ended; `body_follows`: no END_STREAM on it. May dispatch or refuse.
    void headers_done(bool body_follows) {
        body_follows_ = body_follows;
        input_ = body_follows ? Input::Body : Input::Complete;
    }
    void data(const uint8_t* bytes, size_t len);
    void end_of_input();  // END_STREAM (a BodyWait body stays waiting for its budget)
    // Dispatches what became ready during the last input (run outside nghttp2's callbacks).
    void run_ready();
    bool admit_body();      // BodyWait: the budget may have room; false: still waiting
    void deliver_upload();  // a waiting handler gets what arrived (kicked)
    // The stream closed (reset, or done): whoever waits on it learns it.
    void closed(uint32_t error_code);
    // A deferred answer arrived from its Deferred.
    void complete(Reply&& reply);
    // The data source: the body's next bytes, as nghttp2 asks (stream_answer.cpp).
    ssize_t read_body(uint8_t* buf, size_t length, uint32_t* flags);
    bool resume(const StreamLink* link);  // a waker for this stream: true if it was ours
    void end_waiting_body();              // the drain: a waiting stream body ends now
    // The session's periodic check of a buffered body still arriving, not yet answered: one
    // that waited for the budget or stalled (`stalled`: no DATA for the body timeout) that
    // long, or fell below the minimum rate, is refused (503 with Retry-After, 408), as on
    // HTTP/1.1. False: still in time, or not such a stream (a stalled one is reset instead).
    bool refuses_body(uint64_t now, bool stalled);
    void sent();  // the answer's last frame left

    int32_t id() const { return id_; }
    Input input() const { return input_; }
    Output output() const { return output_; }
    bool body_waiting_for_producer() const { return producer_waiting_; }
    uint64_t progress_ms = 0;    // when this stream last moved bytes either way
    bool tree_priority = false;  // the HEADERS frame carried an RFC 7540 priority
    uint32_t close_code = 0;     // why nghttp2 closed it (told to closed() after the callbacks)
    size_t index = 0;            // in the session's list of streams

private:
    enum class Body : uint8_t { None, Bytes, File, Producer };

    void plan();
    void apply_urgency();
    void dispatch(BodyStream* stream = nullptr);
    void refuse(int status, const char* reason, unsigned retry_after_s = 0);
    void consume(size_t n);  // gives `n` received bytes' window back to the client
    void submit(const ReplyView& reply, std::string* movable_body);
    void submit_simple(int status, std::string_view body, std::string_view extra_fields);
    void submit_fields(bool with_body);
    void release_budget();
    void drop_producer();
    void end_body(uint32_t* flags);
    Deferred defer();

    void reuse(Http2Session& session, int32_t id);

    Http2Session* session_;
    int32_t id_;
    Input input_ = Input::Headers;
    Output output_ = Output::Owed;
    bool body_follows_ = false;
    bool ended_in_wait_ = false;  // END_STREAM came while the body waited for the budget
    bool planned_ = false;        // plan() ran: the head is built, the body's mode is known
    bool over_limit_ = false;     // the body passed its limit: refused at the next run_ready
    bool dispatched_ = false;     // serve() ran
    bool refused_ = false;        // answered by a refusal: further DATA is dropped
    bool head_only_ = false;      // HEAD: no body in the answer
    bool producer_waiting_ = false;

    http::http2::RequestHeadBuilder request_;
    http::RequestHead head_;
    std::vector<http::Header> fields_;
    BodyPlan plan_;
    std::string body_;            // a buffered body
    uint64_t received_ = 0;       // body bytes so far
    uint64_t unconsumed_ = 0;     // of them, what the client's window has not been given back
    size_t uncounted_ = 0;        // header bytes past the limit, counted and dropped
    uint64_t reserved_ = 0;       // of the body budget
    uint64_t wanted_ = 0;         // BodyWait: what it waits to reserve
    uint64_t wait_since_ms_ = 0;  // BodyWait: since when (bounded by the body timeout)
    Pace pace_;                   // a buffered body's minimum rate, from its reservation
    std::shared_ptr<BodyStream> upload_;  // a streamed body
    std::string inbox_;  // its bytes the handler has not taken (not consumed: the window)

    std::shared_ptr<DeferredState> deferred_;
    Body body_kind_ = Body::None;
    std::string out_;  // Bytes; or the producer's current piece
    size_t out_offset_ = 0;
    FileBody file_;
    std::shared_ptr<StreamProducer> producer_;
    StreamWaker waker_;
    bool producer_done_ = false;
    std::shared_ptr<Trailers> trailers_;  // sent after the body, if it ends complete
    bool producer_said_wait_ = false;     // its last call said Waiting: not called before a wake
};

}  // namespace rivet::engine
