#include "http/http2/request_head.hpp"

namespace rivet::http::http2 {

PrefaceMatch match_preface(std::string_view data) {
    if (data.size() >= kPreface.size())
        return data.substr(0, kPreface.size()) == kPreface ? PrefaceMatch::Full : PrefaceMatch::No;
    return kPreface.substr(0, data.size()) == data ? PrefaceMatch::Partial : PrefaceMatch::No;
}

bool connection_specific(std::string_view name) {
    for (std::string_view f :
         {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade"})
        if (iequals(name, f)) return true;
    return false;
}

void RequestHeadBuilder::clear() {
    constexpr size_t kKept = 4096;  // a larger head's buffer is not kept for the next one
    if (storage_.capacity() > kKept) std::string().swap(storage_);
    if (fields_.capacity() > kKept / sizeof(Field)) std::vector<Field>().swap(fields_);
    storage_.clear();
    fields_.clear();
    method_ = scheme_ = authority_ = path_ = {};
    list_size_ = 0;
}

RequestHeadBuilder::Span RequestHeadBuilder::keep(std::string_view bytes) {
    // One allocation for a usual head, not one per doubling.
    if (storage_.capacity() < 512) storage_.reserve(512);
    Span s{uint32_t(storage_.size()), uint32_t(bytes.size())};
    storage_.append(bytes);
    return s;
}

void RequestHeadBuilder::add(std::string_view name, std::string_view value) {
    list_size_ += name.size() + value.size() + kFieldOverhead;
    if (!name.empty() && name[0] == ':') {
        const Span v = keep(value);
        if (name == ":method")
            method_ = v;
        else if (name == ":path")
            path_ = v;
        else if (name == ":authority")
            authority_ = v;
        else if (name == ":scheme")
            scheme_ = v;
        return;
    }
    const Span n = keep(name);
    if (fields_.capacity() < 16) fields_.reserve(16);
    fields_.push_back({n, keep(value)});
}

int RequestHeadBuilder::finish(RequestHead& head, std::vector<Header>& fields, bool body_follows) {
    // A client may split Cookie into one field per pair for HPACK's sake; an HTTP/1.1 reader
    // sees them joined with "; " (RFC 9113 §8.2.3). Joined first: storage_ must not move once
    // views point into it.
    size_t cookies = 0;
    for (const Field& f : fields_) cookies += at(f.name) == "cookie";
    Span joined{};
    if (cookies > 1) {
        joined.offset = uint32_t(storage_.size());
        for (const Field& f : fields_) {
            if (at(f.name) != "cookie") continue;
            if (storage_.size() > joined.offset) storage_.append("; ");
            storage_.append(at(f.value));
        }
        joined.size = uint32_t(storage_.size() - joined.offset);
    }
    const bool has_host = [&] {
        for (const Field& f : fields_)
            if (at(f.name) == "host") return true;
        return false;
    }();

    fields.clear();
    fields.reserve(fields_.size() + 1);
    bool cookie_added = false;
    for (const Field& f : fields_) {
        const std::string_view name = at(f.name);
        if (cookies > 1 && name == "cookie") {
            if (!cookie_added) fields.push_back({name, at(joined)});
            cookie_added = true;
            continue;
        }
        fields.push_back({name, at(f.value)});
    }
    // Code written for HTTP/1.1 reads the Host field: :authority stands for it (RFC 9113 §8.3.1).
    if (!has_host && authority_.size) fields.push_back({"host", at(authority_)});

    head = {};
    head.version_major = 2;
    head.version_minor = 0;
    head.method_name = at(method_);
    head.method = method_from_name(head.method_name);
    head.target = at(path_);
    head.path = head.target;
    if (const size_t q = head.target.find('?'); q != std::string_view::npos) {
        head.path = head.target.substr(0, q);
        head.query = head.target.substr(q + 1);
    }
    head.authority = authority_.size ? at(authority_) : find_header(fields, "host");
    head.headers = fields;
    head.keep_alive = true;
    const std::string_view length = find_header(fields, "content-length");
    if (!length.empty()) {
        if (!parse_content_length(length, head.content_length)) return 400;
        head.framing = BodyFraming::ContentLength;
    } else {
        // No length said: the body ends with the stream. "Chunked" is how the engine says
        // "a body of unknown length" to the application.
        head.framing = body_follows ? BodyFraming::Chunked : BodyFraming::None;
    }
    if (!body_follows && head.framing == BodyFraming::ContentLength && head.content_length > 0)
        return 400;  // nghttp2 checks this too; a head that promises a body that cannot come
    head.expect_continue = false;  // no interim answer is owed on HTTP/2: the window says it
    return 0;
}

}  // namespace rivet::http::http2
