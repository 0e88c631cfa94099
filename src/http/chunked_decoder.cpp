// The chunked body decoder: a byte-at-a-time state machine for the framing, with the payload
// copied in one piece per chunk. It keeps its whole state in the object, so input may be split
// anywhere; the error offsets it reports are positions in the current input.
#include "http/chunked_decoder.hpp"

#include <algorithm>

namespace rivet::http {
namespace {

bool is_tchar(unsigned char c) {
    constexpr std::string_view punct = "!#$%&'*+-.^_`|~";
    return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
           (c != 0 && punct.find(static_cast<char>(c)) != std::string_view::npos);
}

bool is_ws(unsigned char c) {
    return c == ' ' || c == '\t';
}

// field-vchar, obs-text, SP, HTAB: what a trailer value, qdtext and a quoted-pair may hold
// (the quote and backslash are dealt with before this is asked).
bool is_text(unsigned char c) {
    return c == '\t' || (c >= 0x20 && c != 0x7f);
}

int hex_value(unsigned char c) {
    if (c >= '0' && c <= '9') return c - '0';
    c |= 0x20;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

}  // namespace

ChunkedDecoder::Result ChunkedDecoder::fail(size_t at, int status, const char* reason) {
    state_ = State::Failed;
    error_status_ = status;
    error_reason_ = reason;
    return {Result::Error, at, status, reason};
}

void ChunkedDecoder::reset() {
    *this = ChunkedDecoder(max_body_, max_trailer_bytes_);
}

ChunkedDecoder::Result ChunkedDecoder::feed(std::string_view in, std::string& body) {
    if (state_ == State::Failed) return {Result::Error, 0, error_status_, error_reason_};
    if (state_ == State::Finished) return {Result::Done, 0, 0, ""};
    const auto* s = reinterpret_cast<const unsigned char*>(in.data());
    const size_t n = in.size();
    size_t i = 0;
    while (i < n) {
        if (state_ == State::Data) {
            const auto take = static_cast<size_t>(std::min<uint64_t>(chunk_left_, n - i));
            body.append(in.data() + i, take);
            i += take;
            chunk_left_ -= take;
            if (chunk_left_ == 0) state_ = State::DataCR;
            continue;
        }
        const unsigned char c = s[i];
        // The states up to SizeLF make up the chunk-size line (the enum keeps them first); it
        // is bounded so that endless zeros or extensions cannot keep us reading for nothing.
        if (state_ < State::SizeLF && c != '\r' && ++line_bytes_ > kMaxSizeLine)
            return fail(i, 400, "chunk-size line too long");
        if (state_ >= State::TrailerStart && state_ <= State::TrailerLF &&
            !(state_ == State::TrailerStart && c == '\r') && ++trailer_bytes_ > max_trailer_bytes_)
            return fail(i, 431, "trailer section too large");

        switch (state_) {
            case State::Size:
                if (const int d = hex_value(c); d >= 0) {
                    if (chunk_left_ >> 60) return fail(i, 400, "chunk size too large");
                    chunk_left_ = chunk_left_ << 4 | static_cast<uint64_t>(d);
                    ++size_digits_;
                } else if (size_digits_ == 0) {
                    return fail(i, 400, "missing chunk size");
                } else if (c == ';') {
                    state_ = State::ExtStart;
                } else if (c == '\r') {
                    state_ = State::SizeLF;
                } else {
                    return fail(i, 400, "invalid character after chunk size");
                }
                break;
            // Extensions: *( BWS ";" BWS name [ BWS "=" BWS ( token / quoted-string ) ] ), RFC
            // 9112 §7.1.1, except that no whitespace may follow the size itself: parsers
            // disagree on "5 \r\n", and smuggling lives on such disagreements (llhttp refuses it).
            case State::ExtStart:
                if (is_tchar(c))
                    state_ = State::ExtName;
                else if (!is_ws(c))
                    return fail(i, 400, "missing chunk extension name");
                break;
            case State::ExtName:
                if (is_tchar(c)) break;
                if (c == '=')
                    state_ = State::ExtValStart;
                else if (c == ';')
                    state_ = State::ExtStart;
                else if (c == '\r')
                    state_ = State::SizeLF;
                else if (is_ws(c))
                    state_ = State::ExtNameEnd;
                else
                    return fail(i, 400, "invalid chunk extension name");
                break;
            case State::ExtNameEnd:
                if (c == '=')
                    state_ = State::ExtValStart;
                else if (c == ';')
                    state_ = State::ExtStart;
                else if (!is_ws(c))
                    return fail(i, 400, "invalid chunk extension");
                break;
            case State::ExtValStart:
                if (c == '"')
                    state_ = State::ExtQuoted;
                else if (is_tchar(c))
                    state_ = State::ExtToken;
                else if (!is_ws(c))
                    return fail(i, 400, "invalid chunk extension value");
                break;
            case State::ExtToken:
                if (is_tchar(c)) break;
                if (c == ';')
                    state_ = State::ExtStart;
                else if (c == '\r')
                    state_ = State::SizeLF;
                else if (is_ws(c))
                    state_ = State::ExtWs;
                else
                    return fail(i, 400, "invalid chunk extension value");
                break;
            case State::ExtQuoted:
                if (c == '"')
                    state_ = State::ExtQuotedEnd;
                else if (c == '\\')
                    state_ = State::ExtQuotedEsc;
                else if (!is_text(c))
                    return fail(i, 400, "invalid character in quoted extension");
                break;
            case State::ExtQuotedEsc:
                if (!is_text(c)) return fail(i, 400, "invalid character in quoted extension");
                state_ = State::ExtQuoted;
                break;
            case State::ExtQuotedEnd:
                if (c == ';')
                    state_ = State::ExtStart;
                else if (c == '\r')
                    state_ = State::SizeLF;
                else if (is_ws(c))
                    state_ = State::ExtWs;
                else
                    return fail(i, 400, "invalid chunk extension");
                break;
            case State::ExtWs:
                if (c == ';')
                    state_ = State::ExtStart;
                else if (!is_ws(c))
                    return fail(i, 400, "invalid chunk extension");
                break;
            case State::SizeLF:
                if (c != '\n') return fail(i, 400, "bare CR in chunk-size line");
                if (chunk_left_ > max_body_ - total_) return fail(i, 413, "content too large");
                total_ += chunk_left_;
                size_digits_ = 0;
                line_bytes_ = 0;
                state_ = chunk_left_ == 0 ? State::TrailerStart : State::Data;
                break;
            case State::DataCR:
                if (c != '\r') return fail(i, 400, "missing CRLF after chunk data");
                state_ = State::DataLF;
                break;
            case State::DataLF:
                if (c != '\n') return fail(i, 400, "bare CR after chunk data");
                state_ = State::Size;
                break;
            // Trailer fields: validated like header fields (no obs-fold, no space before the
            // colon), then dropped: nothing downstream may trust them for framing.
            case State::TrailerStart:
                if (c == '\r')
                    state_ = State::LastLF;
                else if (is_ws(c))
                    return fail(i, 400, "obsolete line folding in trailer");
                else if (is_tchar(c))
                    state_ = State::TrailerName;
                else
                    return fail(i, 400, "invalid trailer field name");
                break;
            case State::TrailerName:
                if (c == ':')
                    state_ = State::TrailerValue;
                else if (!is_tchar(c))
                    return fail(i, 400, "invalid trailer field name");
                break;
            case State::TrailerValue:
                if (c == '\r')
                    state_ = State::TrailerLF;
                else if (!is_text(c))
                    return fail(i, 400, "invalid character in trailer field");
                break;
            case State::TrailerLF:
                if (c != '\n') return fail(i, 400, "bare CR in trailer section");
                state_ = State::TrailerStart;
                break;
            case State::LastLF:
                if (c != '\n') return fail(i, 400, "bare CR at end of chunked body");
                state_ = State::Finished;
                return {Result::Done, i + 1, 0, ""};
            case State::Data:
            case State::Finished:
            case State::Failed:
                break;  // handled above
        }
        ++i;
    }
    return {Result::NeedMore, n, 0, ""};
}

}  // namespace rivet::http
