// multipart/form-data parsing: see multipart_parser.hpp.
#include "http/multipart_parser.hpp"

#include <string.h>

#include <algorithm>

#include "http/byte_scan.hpp"
#include "http/field_block.hpp"
#include "http/request_parser.hpp"

namespace rivet::http {

namespace {

using byte_scan::trim_ows;

constexpr size_t kMaxBoundary = 70;  // RFC 2046 §5.1.1

// bchars of RFC 2046 §5.1.1 (a space is allowed, but not as the last one).
bool is_bchar(unsigned char c) {
    if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return true;
    return std::string_view("'()+_,-./:=? ").find(char(c)) != std::string_view::npos;
}

// Walks the `; name=value` parameters after a media type or a disposition type, calling
// f(name, value) with quoted values unquoted; false when the syntax is broken (an unterminated
// quote, a parameter without '=').
template <class F>
bool for_each_parameter(std::string_view rest, F&& f) {
    while (true) {
        rest = trim_ows(rest);
        while (!rest.empty() && rest.front() == ';') rest = trim_ows(rest.substr(1));
        if (rest.empty()) return true;
        const size_t eq = rest.find('=');
        if (eq == std::string_view::npos) return false;
        const std::string_view name = trim_ows(rest.substr(0, eq));
        rest = trim_ows(rest.substr(eq + 1));
        std::string value;
        if (!rest.empty() && rest.front() == '"') {
            size_t i = 1;
            for (; i < rest.size() && rest[i] != '"'; ++i) {
                // Browsers percent-encode '"' (the HTML form encoding) and send '\\' as it is (a
                // Windows path's separator); older clients escape '"' and '\\' with a '\\'. Only
                // those two are taken as escapes, so C:\dir\f.txt keeps its separators.
                if (rest[i] == '\\' && i + 1 < rest.size() &&
                    (rest[i + 1] == '"' || rest[i + 1] == '\\'))
                    ++i;
                value.push_back(rest[i]);
            }
            if (i == rest.size()) return false;
            rest = rest.substr(i + 1);
        } else {
            const size_t end = rest.find(';');
            value = trim_ows(rest.substr(0, end));
            rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end);
        }
        if (name.empty()) return false;
        f(name, std::move(value));
    }
}

}  // namespace

std::optional<std::string> multipart_boundary(std::string_view content_type) {
    const size_t semi = content_type.find(';');
    if (!iequals(trim_ows(content_type.substr(0, semi)), "multipart/form-data")) return {};
    if (semi == std::string_view::npos) return {};
    std::optional<std::string> boundary;
    const bool ok = for_each_parameter(content_type.substr(semi), [&](auto name, auto value) {
        if (iequals(name, "boundary") && !boundary) boundary = std::move(value);
    });
    if (!ok || !boundary || boundary->empty() || boundary->size() > kMaxBoundary ||
        boundary->back() == ' ')
        return {};
    for (char c : *boundary)
        if (!is_bchar(static_cast<unsigned char>(c))) return {};
    return boundary;
}

MultipartParser::MultipartParser(std::string_view boundary, MultipartLimits limits)
    : delimiter_("\r\n--" + std::string(boundary)), limits_(limits), held_("\r\n") {
    // held_ starts as CRLF: the first delimiter may open the body, without the CRLF before it.
}

MultipartParser::Status MultipartParser::fail(std::string why) {
    state_ = State::Failed;
    error_ = std::move(why);
    return Status::Malformed;
}

bool MultipartParser::emit(std::string_view bytes, MultipartHandler& handler) {
    if (bytes.empty() || state_ == State::Preamble) return true;  // the preamble is dropped
    return handler.on_part_data(bytes);
}

// A delimiter's bytes were seen; they end the part only if the rest of their line says so ("--",
// or padding then CRLF). Until then they are held in line_, and given back as content if not.
MultipartParser::Status MultipartParser::delimiter_found(MultipartHandler&) {
    resume_ = state_;
    state_ = State::DelimiterEnd;
    line_ = delimiter_;
    return Status::Ok;
}

// The delimiter line is complete: the part before it (if any) has ended.
bool MultipartParser::delimiter_confirmed(MultipartHandler& handler) {
    line_.clear();
    return resume_ != State::Content || handler.on_part_end();
}

// Not a delimiter after all ("--boundaryX" in a file): its bytes are content, and the byte that
// showed it (still in the input) is scanned as content too.
MultipartParser::Status MultipartParser::not_a_delimiter(MultipartHandler& handler) {
    state_ = resume_;
    const std::string content = std::move(line_);
    line_.clear();
    return emit(content, handler) ? Status::Ok : Status::Stopped;
}

// One byte of a delimiter line after the boundary: the closing "--", or LWSP then CRLF.
MultipartParser::Status MultipartParser::delimiter_line(std::string_view& in,
                                                        MultipartHandler& handler) {
    const char c = in.front();
    const bool dash = c == '-' && (state_ == State::DelimiterEnd || state_ == State::CloseDash);
    const bool crlf = (c == '\r' && (state_ == State::DelimiterEnd || state_ == State::Padding)) ||
                      (c == '\n' && state_ == State::PaddingLf);
    const bool lwsp = (c == ' ' || c == '\t') &&
                      (state_ == State::DelimiterEnd || state_ == State::Padding) &&
                      line_.size() < delimiter_.size() + limits_.max_header_bytes;
    if (!dash && !crlf && !lwsp) return not_a_delimiter(handler);
    in.remove_prefix(1);
    line_.push_back(c);
    if (state_ == State::CloseDash) {
        state_ = State::Epilogue;
        return delimiter_confirmed(handler) ? Status::Ok : Status::Stopped;
    }
    if (state_ == State::PaddingLf) {
        if (!delimiter_confirmed(handler)) return Status::Stopped;
        if (++parts_ > limits_.max_parts) {
            state_ = State::Failed;
            return Status::TooManyParts;
        }
        headers_ = "\r\n";
        state_ = State::Headers;
        return Status::Ok;
    }
    state_ = dash ? State::CloseDash : c == '\r' ? State::PaddingLf : State::Padding;
    return Status::Ok;
}

// Content (or the preamble): hands on every byte that cannot be the start of the delimiter,
// holds the rest (a prefix of the delimiter at the end of `in`) for the next piece. The delimiter
// holds '\r' only at its start (bchars exclude it), so a held prefix that fails to continue is
// content as a whole: no delimiter can start inside it.
MultipartParser::Status MultipartParser::scan_content(std::string_view& in,
                                                      MultipartHandler& handler) {
    const std::string_view delim = delimiter_;
    if (!held_.empty()) {
        const size_t need = delim.size() - held_.size();
        const size_t n = std::min(need, in.size());
        if (in.substr(0, n) == delim.substr(held_.size(), n)) {
            in.remove_prefix(n);
            if (n < need) {
                held_.append(delim.substr(held_.size(), n));
                return Status::Ok;
            }
            held_.clear();
            return delimiter_found(handler);
        }
        const std::string content = std::move(held_);
        held_.clear();
        if (!emit(content, handler)) return Status::Stopped;
    }
    if (const void* at = memmem(in.data(), in.size(), delim.data(), delim.size())) {
        const size_t pos = static_cast<const char*>(at) - in.data();
        if (!emit(in.substr(0, pos), handler)) return Status::Stopped;
        in.remove_prefix(pos + delim.size());
        return delimiter_found(handler);
    }
    size_t keep = in.size();
    for (size_t i = in.size() > delim.size() ? in.size() - delim.size() + 1 : 0; i < in.size();
         ++i) {
        if (in[i] == '\r' && delim.substr(0, in.size() - i) == in.substr(i)) {
            keep = i;
            break;
        }
    }
    const std::string_view content = in.substr(0, keep);
    held_.assign(in.substr(keep));
    in = {};
    return emit(content, handler) ? Status::Ok : Status::Stopped;
}

// A part's header block, up to its empty line; held whole (it is bounded), then parsed.
MultipartParser::Status MultipartParser::take_headers(std::string_view& in,
                                                      MultipartHandler& handler) {
    // headers_ starts as CRLF, so an empty block (the part's content right after the delimiter
    // line) is the same CRLFCRLF as the end of a block with fields.
    const size_t bound = limits_.max_header_bytes + 2;
    const size_t old = headers_.size();
    headers_.append(in.substr(0, bound - old));
    const size_t end = headers_.find("\r\n\r\n", old >= 3 ? old - 3 : 0);
    if (end == std::string::npos) {
        if (headers_.size() >= bound) {
            state_ = State::Failed;
            return Status::HeaderTooLarge;
        }
        in = {};
        return Status::Ok;
    }
    in.remove_prefix(end + 4 - old);
    PartHead head;
    bool has_disposition = false;
    // The same field-line rules as a request head's (no folding, no bytes a field may not hold),
    // so a part header is read as the server reads every other header.
    const auto* bytes = reinterpret_cast<const unsigned char*>(headers_.data());
    const FieldBlock block = scan_field_block(
        bytes, 2, end + 4, limits_.max_header_bytes,
        [&](size_t, std::string_view name, std::string_view value) -> const char* {
            if (iequals(name, "content-type")) {
                head.content_type = value;
            } else if (iequals(name, "content-disposition")) {
                has_disposition = true;
                const size_t semi = value.find(';');
                if (!iequals(trim_ows(value.substr(0, semi)), "form-data"))
                    return "Content-Disposition is not form-data";
                const std::string_view params =
                    semi == std::string_view::npos ? std::string_view{} : value.substr(semi);
                const bool ok = for_each_parameter(params, [&](auto pname, auto pvalue) {
                    // filename* (RFC 5987) is not for form-data (RFC 7578 §4.2): ignored.
                    if (iequals(pname, "name")) head.name = std::move(pvalue);
                    if (iequals(pname, "filename")) head.filename = std::move(pvalue);
                });
                if (!ok) return "a malformed Content-Disposition parameter";
            }
            return nullptr;
        });
    if (block.end != FieldBlockEnd::Complete)
        return fail(std::string("a part header: ") + (block.why ? block.why : "malformed"));
    if (!has_disposition) return fail("a part without Content-Disposition");
    if (head.name.empty()) return fail("a part without a name in its Content-Disposition");
    if (head.content_type.empty()) head.content_type = "text/plain";
    headers_.clear();
    state_ = State::Content;
    return handler.on_part_begin(head) ? Status::Ok : Status::Stopped;
}

MultipartParser::Status MultipartParser::feed(std::string_view in, MultipartHandler& handler) {
    while (!in.empty()) {
        Status s = Status::Ok;
        switch (state_) {
            case State::Failed:
                return Status::Malformed;
            case State::Epilogue:
                return Status::Ok;  // dropped, as RFC 2046 asks
            case State::Preamble:
            case State::Content:
                s = scan_content(in, handler);
                break;
            case State::Headers:
                s = take_headers(in, handler);
                break;
            case State::DelimiterEnd:
            case State::Padding:
            case State::PaddingLf:
            case State::CloseDash:
                s = delimiter_line(in, handler);
                break;
        }
        if (s != Status::Ok) return s;
    }
    return state_ == State::Failed ? Status::Malformed : Status::Ok;
}

MultipartParser::Status MultipartParser::finish() {
    if (state_ == State::Epilogue) return Status::Ok;
    if (state_ == State::Failed) return Status::Malformed;
    return fail(state_ == State::Preamble ? "no boundary in the body"
                                          : "the body ends before its closing boundary");
}

}  // namespace rivet::http
