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

struct ReplyView {
    http::ResponseHead head;                 // its body kind says whether stream or file is set
    std::shared_ptr<StreamProducer> stream;  // head.body_kind == Streamed
    FileBody file;                           // head.body_kind == Sized
    bool close = false;                      // the connection ends after this answer
    // Set: once this answer (a 101) has left, the connection goes on in another protocol,
    // with the bytes read after this request (Http1Session::Phase::Switching).
    SessionFactory then;
};

struct Reply {
    int status = 200;
    std::string content_type;
    std::vector<std::pair<std::string, std::string>> fields;
    std::string body;
    std::shared_ptr<StreamProducer> stream;
    FileBody file;
    bool close = false;
    SessionFactory then;

    static Reply copy_of(const ReplyView& v);
    ReplyView view() const;
};

}  // namespace rivet::engine
