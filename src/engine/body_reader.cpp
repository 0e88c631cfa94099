#include "engine/body_reader.hpp"

namespace rivet::engine {

BodyReader::BodyReader(const http::RequestHead& head, uint64_t max_body)
    : framing_(head.framing),
      length_(head.content_length),
      max_body_(max_body),
      chunked_(max_body) {}

BodyReader::Status BodyReader::fail(int status, const char* reason) {
    error_status_ = status;
    error_reason_ = reason;
    return Status::Error;
}

BodyReader::Status BodyReader::read(std::string_view after_head) {
    if (framing_ != http::BodyFraming::Chunked) {
        if (after_head.size() < length_) return Status::NeedMore;
        body_ = after_head.substr(0, length_);
        consumed_ = length_;
        return Status::Done;
    }
    auto fed = chunked_.feed(after_head.substr(raw_fed_), decoded_);
    if (fed.kind == http::ChunkedDecoder::Result::Error) return fail(fed.status, fed.reason);
    raw_fed_ += fed.consumed;
    // The raw bytes stay buffered until the body is complete; extensions and tiny chunks must
    // not let them outgrow the body limit by much.
    const uint64_t slack = max_body_ > UINT64_MAX / 4 ? UINT64_MAX : 2 * max_body_ + 64 * 1024;
    if (raw_fed_ > slack) return fail(413, "chunked framing too large for the body limit");
    if (fed.kind == http::ChunkedDecoder::Result::NeedMore) return Status::NeedMore;
    body_ = decoded_;
    consumed_ = raw_fed_;
    return Status::Done;
}

}  // namespace rivet::engine
