#include "http/body_decoder.hpp"

#include <algorithm>

namespace rivet::http {

BodyDecoder::Result BodyDecoder::feed(std::string_view in, std::string* sink) {
    if (framing_ == BodyFraming::Chunked) {
        const size_t before = sink->size();
        Result r = chunked_.feed(in, *sink);
        received_ += sink->size() - before;
        return r;
    }
    const size_t n = size_t(std::min<uint64_t>(in.size(), remaining_));
    if (sink) sink->append(in.data(), n);
    remaining_ -= n;
    received_ += n;
    Result r;
    r.kind = remaining_ == 0 ? Result::Done : Result::NeedMore;
    r.consumed = n;
    return r;
}

}  // namespace rivet::http
