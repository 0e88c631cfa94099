// rivet::Response: an HTTP response as a plain value (status, fields, body), filled by a handler
// and serialized by the server. Nothing here knows about sockets or threads.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include <rivet/cookie.hpp>
#include <rivet/response_headers.hpp>
#include <rivet/stream.hpp>

namespace rivet {

namespace detail {
struct ResponseUpgrade;  // app/: what a 101 hands the connection to (rivet/websocket.hpp)
struct ResponseAccess;
struct TrailerFields;  // app/: the fields, as the engine reads them when the body ends
struct TrailerAccess;
struct BodyWork;  // app/: what an after() left to do on the body off the I/O loop
}  // namespace detail

// An open file whose bytes responses send with sendfile(2), straight from the page cache.
// Shared by the responses (and caches) that use it; closed when the last one lets go.
class OpenFile {
public:
    explicit OpenFile(int fd) : fd_(fd) {}
    ~OpenFile();
    OpenFile(const OpenFile&) = delete;
    OpenFile& operator=(const OpenFile&) = delete;
    int fd() const { return fd_; }

private:
    int fd_;
};

// A byte range of an open file, as a response body.
struct FileRange {
    std::shared_ptr<const OpenFile> file;
    uint64_t offset = 0;
    uint64_t length = 0;
};

// Trailer fields: sent after the body, for what is known only once it is (a checksum, gRPC's
// grpc-status). HTTP/1.1 sends them in the last chunk of chunked coding (a response with
// trailers is chunked whatever its body); HTTP/1.0 has no chunked coding and drops them; HTTP/2
// sends a HEADERS frame after the data. A handle made by Response::trailers(): copies name the
// same fields, which the response sends when its body ends, so a streamed body's producer keeps
// one and adds to it before it says the body is done:
//
//   rivet::Trailers trailers = res.trailers();
//   res.stream([trailers, sum = Sum()](std::string& out) mutable {
//       ... append a piece, add it to sum ...
//       if (more) return true;
//       trailers.add("checksum", sum.hex());  // read once the producer said done
//       return false;
//   }, "text/plain");
//
// Not thread-safe: add from the thread that runs the producer (its I/O loop), or order the
// adds before its last call as for its other state. A stream cut short (the client left, the
// server's drain) sends none: a client that needs them sees it did not end.
class Trailers {
public:
    Trailers() = default;  // names no response: add() throws std::logic_error
    // Adds a field (in order; a name may repeat). Throws std::invalid_argument as
    // Response::header does (a name that is not a token, a value holding CR, LF or NUL), and
    // for the fields a trailer may not carry (RFC 9110 §6.5.1: Content-Length,
    // Transfer-Encoding, Host, Connection, TE, Trailer, Content-Type, Content-Encoding,
    // Cache-Control, Set-Cookie, Authorization, Location, ...).
    Trailers& add(std::string_view name, std::string_view value);
    std::string_view get(std::string_view name) const;  // first match, "" if none
    // The fields added so far (empty for a default-made handle).
    const std::vector<std::pair<std::string, std::string>>& fields() const;
    explicit operator bool() const { return fields_ != nullptr; }

private:
    friend class Response;
    friend struct detail::TrailerAccess;
    std::shared_ptr<detail::TrailerFields> fields_;
};

// Produces a streamed body piece by piece: append the next piece to `out` and return true while
// more follows; return false when done (anything appended on that call is still sent).
using BodyProducer = std::function<bool(std::string& out)>;

class Response {
public:
    Response() = default;
    explicit Response(int status) { this->status(status); }

    int status() const { return status_; }
    // Throws std::invalid_argument outside 200..599: 1xx answers are the server's own (100
    // Continue; 101 from a WebSocket route, App::ws).
    Response& status(int code);

    // Body setters; each sets the matching Content-Type.
    Response& text(std::string_view body);        // text/plain; charset=utf-8
    Response& html(std::string_view body);        // text/html; charset=utf-8
    Response& json(const nlohmann::json& value);  // application/json
    Response& body(std::string_view body, std::string_view content_type);
    Response& body(std::string&& body, std::string_view content_type);
    // A body shared, not copied: bytes that many responses send (a cached page or file). The
    // response keeps them alive until they are written; body() reads them like any other.
    Response& body(std::shared_ptr<const std::string> shared, std::string_view content_type);
    const std::string& body() const { return shared_body_ ? *shared_body_ : body_; }
    // The body to change in place; a shared one is copied first (its owner's stays as it is).
    std::string& mutable_body();

    // The Content-Type: a static literal for the common types (no copy per response), or a
    // string of its own when set at run time.
    std::string_view content_type() const { return own_type_.empty() ? static_type_ : own_type_; }
    Response& content_type(std::string_view type);

    // Adds a field, serialized in order. Throws std::invalid_argument if the name is not a
    // token, the value holds CR, LF or NUL (response splitting), or the field is one the server
    // owns (Content-Length, Transfer-Encoding, Date). "Connection: close" ends the connection
    // after this response; "Content-Type" replaces the type.
    Response& header(std::string_view name, std::string_view value);
    const ResponseHeaders& headers() const { return headers_; }
    // The first match, "" if none; a view into this response (rivet/response_headers.hpp).
    std::string_view header(std::string_view name) const;
    // Removes every field named `name` (case-insensitive) that header() added; for middleware
    // that rewrites a field (set it again with header()).
    Response& remove_header(std::string_view name);

    // Adds a Set-Cookie field for `cookie` (rivet/cookie.hpp), one per call; throws
    // std::invalid_argument for what rivet/cookie.hpp lists, before anything is added.
    Response& cookie(const Cookie& cookie);
    // Tells the browser to drop the cookie `name`: an empty value, Max-Age=0 and an Expires in
    // the past. Path and Domain must be the ones it was set with, or the browser keeps it.
    Response& delete_cookie(std::string_view name, std::string_view path = "/",
                            std::string_view domain = "");

    // A body sent from a file with sendfile(2) (Content-Length = range.length); the I/O loop
    // sends it in bounded pieces as the socket takes them, never blocking on it.
    Response& file(FileRange range, std::string_view content_type);
    const FileRange* file_range() const { return file_.file ? &file_ : nullptr; }

    // Streaming: the body comes from `producer`, sent with chunked coding (HTTP/1.1) or until
    // the connection closes (HTTP/1.0). The producer runs on the connection's I/O loop each time
    // the socket can take more, so it must not block.
    Response& stream(BodyProducer producer, std::string_view content_type);
    const std::shared_ptr<BodyProducer>& producer() const { return producer_; }
    // Streaming with a producer that can wait without being called (rivet/stream.hpp): for
    // bodies whose pieces come later, from timers or other threads (Server-Sent Events: see
    // rivet/event_stream.hpp). Sent as above.
    Response& stream(WaitingProducer producer, std::string_view content_type);
    const std::shared_ptr<WaitingProducer>& waiting_producer() const { return waiting_; }
    bool streamed() const { return producer_ || waiting_; }  // either form

    // Trailers (see Trailers): trailer() adds one known before the body ends (validated as
    // Trailers::add, which it calls); trailers() is the handle a streamed body's producer keeps
    // to add them at its end, made on the first call. Error answers that replace the response
    // drop them.
    Response& trailer(std::string_view name, std::string_view value);
    Trailers trailers();
    bool has_trailers() const { return bool(trailers_); }

    bool close_connection() const { return close_; }
    Response& close_connection(bool close) {
        close_ = close;
        return *this;
    }

private:
    friend struct detail::ResponseAccess;
    friend struct detail::TrailerAccess;
    void append_field(std::string_view name, std::string_view value);  // checked before
    void set_static_type(std::string_view literal) {
        static_type_ = literal;
        own_type_.clear();
    }

    int status_ = 200;
    bool close_ = false;
    std::string body_;
    std::shared_ptr<const std::string> shared_body_;  // set: the body, in place of body_
    std::string_view static_type_;
    std::string own_type_;
    ResponseHeaders headers_;
    std::shared_ptr<BodyProducer> producer_;
    std::shared_ptr<WaitingProducer> waiting_;
    FileRange file_;
    Trailers trailers_;  // none (no allocation) until trailer() or trailers()
    std::shared_ptr<const detail::ResponseUpgrade> upgrade_;  // a WebSocket route's 101
    std::shared_ptr<const detail::BodyWork> body_work_;       // rivet::compression()'s, say
};

}  // namespace rivet
