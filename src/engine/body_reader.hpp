// BodyReader: one buffered request body, read after its head with the one body decoder
// (http::BodyDecoder, as h2o's entity readers): a Content-Length body is a view of the bytes as
// they are, a chunked one is decoded into a string of the reader's own. The connection chooses
// it once, when the head is parsed, and feeds it until it is done; the head is never parsed
// again. (A streamed body, BodyStream, is the same decoder with the handler's pieces as sink.)
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "http/body_decoder.hpp"
#include "http/request_parser.hpp"

namespace rivet::engine {

class BodyReader {
public:
    enum class Status : uint8_t { NeedMore, Done, Error };

    // For a head whose framing is ContentLength or Chunked.
    BodyReader(const http::RequestHead& head, uint64_t max_body);

    // `after_head`: every byte received after the head so far (the same bytes again each call,
    // grown; they may have moved). Done: body() and consumed() are set.
    Status read(std::string_view after_head);

    std::string_view body() const { return body_; }  // Done: valid while the bytes are
    size_t consumed() const { return consumed_; }    // Done: bytes of after_head that were ours
    int error_status() const { return error_status_; }
    const char* error_reason() const { return error_reason_; }

private:
    Status fail(int status, const char* reason);

    http::BodyDecoder decoder_;
    uint64_t max_body_ = 0;  // Chunked: the decoded size limit (raw framing gets some slack)
    std::string decoded_;    // Chunked: the payload so far
    size_t raw_fed_ = 0;     // bytes of after_head already given to the decoder
    std::string_view body_;
    size_t consumed_ = 0;
    int error_status_ = 0;
    const char* error_reason_ = "";
};

}  // namespace rivet::engine
