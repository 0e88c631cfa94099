#include "engine/body_reader.hpp"

namespace rivet::engine {

BodyReader::BodyReader(const http::RequestHead& head, uint64_t max_body)
    : decoder_(head.framing, head.content_length, max_body), max_body_(max_body) {}

BodyReader::Status BodyReader::fail(int status, const char* reason) {
    error_status_ = status;
    error_reason_ = reason;
    return Status::Error;
}

BodyReader::Status BodyReader::read(std::string_view after_head) {
    const bool chunked = decoder_.chunked();
    // A Content-Length body stays in the bytes it arrived in: the decoder only counts it off.
    auto fed = decoder_.feed(after_head.substr(raw_fed_), chunked ? &decoded_ : nullptr);
    if (fed.kind == http::BodyDecoder::Result::Error) return fail(fed.status, fed.reason);
    raw_fed_ += fed.consumed;
    // The raw bytes stay buffered until the body is complete; extensions and tiny chunks must
    // not let them outgrow the body limit by much.
    const uint64_t slack = max_body_ > UINT64_MAX / 4 ? UINT64_MAX : 2 * max_body_ + 64 * 1024;
    if (chunked && raw_fed_ > slack)
        return fail(413, "chunked framing too large for the body limit");
    if (fed.kind == http::BodyDecoder::Result::NeedMore) return Status::NeedMore;
    body_ = chunked ? std::string_view(decoded_) : after_head.substr(0, raw_fed_);
    consumed_ = raw_fed_;
    return Status::Done;
}

}  // namespace rivet::engine
