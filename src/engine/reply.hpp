// Reply: what the engine sends for one request, in its own terms (the framework's Response is
// above this layer; app/server_options.hpp converts). A ReplyView is views, for an answer written
// at once: nothing is copied. A Reply owns its bytes, for an answer that waits in a connection's
// queue or comes from another thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/stream.hpp"
#include "http/response_writer.hpp"

namespace rivet::engine {

class Connection;
class Session;
// Makes the session a connection goes on with after an answer hands it over (Reply::then).
using SessionFactory = std::function<std::unique_ptr<Session>(Connection&)>;

// A byte range of an open file, sent with sendfile(2); `owner` keeps the descriptor open.
struct FileBody {
    std::shared_ptr<const void> owner;
    int fd = -1;
    uint64_t offset = 0;
    uint64_t length = 0;
};

// Trailer fields: sent after the body (HTTP/1.1: in the last chunk of chunked coding; HTTP/2: a
// trailing HEADERS frame). Names and values are validated where they are added (the app's
// rivet::Trailers::set: names are tokens, none of http::trailer_field_allowed's refusals, values
// without CR, LF or NUL); the engine sends them as they are, in order, names as given.
struct Trailers {
    std::vector<std::pair<std::string, std::string>> fields;
};

struct ReplyView {
    http::ResponseHead head;                 // its body kind says whether stream or file is set
    std::shared_ptr<StreamProducer> stream;  // head.body_kind == Streamed
    FileBody file;                           // head.body_kind == Sized
    // Set: the answer has trailers (null for almost every answer: nothing allocated). Read
    // only once the body is complete: for a Streamed body after its producer returned Done (it
    // may fill them on that very call), for Bytes and Sized bodies when the body is sent. The
    // fields present when the head is written are known up front (HTTP/1.1 announces their
    // names in a Trailer field). A stream cut short (the drain, a close) sends none.
    // HTTP/1.1 sends them chunked (any body kind); HTTP/1.0 drops them (it has no chunked
    // coding to carry them); answers without a body (HEAD, 204, 304) have none.
    std::shared_ptr<Trailers> trailers;
    bool close = false;  // the connection ends after this answer
    // Set: once this answer (a 101) has left, the connection goes on in another protocol,
    // with the bytes read after this request (Http1Session::Phase::Switching).
    SessionFactory then;
};

struct Reply {
    int status = 200;
    std::string content_type;
    std::string field_lines;  // "Name: value\r\n" each (http::FieldLines)
    std::string body;
    std::shared_ptr<StreamProducer> stream;
    FileBody file;
    std::shared_ptr<Trailers> trailers;  // as ReplyView::trailers (shared, not copied)
    bool close = false;
    SessionFactory then;

    static Reply copy_of(const ReplyView& v);
    ReplyView view() const;
};

}  // namespace rivet::engine
