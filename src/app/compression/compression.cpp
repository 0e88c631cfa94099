// rivet::compression(): the middleware. What to compress and the fields it touches are decided
// here; the coding is chosen in accept_encoding.cpp (the one negotiation, the static files' too)
// and applied in compression_codecs.cpp, on the loop for a small body, on a worker for a large
// one (detail::BodyWork).
#include <rivet/compression.hpp>

#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "app/compression/accept_encoding.hpp"
#include "app/compression/compressible_type.hpp"
#include "app/compression/compression_codecs.hpp"
#include "app/request/response_access.hpp"
#include "http/byte_scan.hpp"
#include "http/request_parser.hpp"

namespace rivet {

const char* content_coding_name(ContentCoding coding) {
    switch (coding) {
        case ContentCoding::Gzip:
            return "gzip";
        case ContentCoding::Brotli:
            return "br";
        case ContentCoding::Zstd:
            return "zstd";
    }
    return "identity";
}

namespace {

// Whether the comma-separated field value lists `token` (case-insensitive).
bool lists_token(std::string_view value, std::string_view token) {
    while (!value.empty()) {
        size_t comma = value.find(',');
        std::string_view item = http::byte_scan::trim_ows(value.substr(0, comma));
        value = comma == std::string_view::npos ? std::string_view{} : value.substr(comma + 1);
        if (http::iequals(item, token)) return true;
    }
    return false;
}

// Why a response is left as it is, whatever the request accepts.
enum class Eligibility : uint8_t {
    Compressible,
    NoBody,          // 1xx, 204, 304: nothing to compress
    Partial,         // 206 or Content-Range: ranges are of the identity body
    NotInMemory,     // a file sent with sendfile, or a stream
    AlreadyEncoded,  // Content-Encoding set (a precompressed file)
    NoTransform,     // Cache-Control: no-transform
    TooSmall,
    OtherType,
};

Eligibility eligibility(const Response& res, const CompressionOptions& o,
                        const app::CompressibleTypes& types) {
    int status = res.status();
    if (status < 200 || status == 204 || status == 304) return Eligibility::NoBody;
    if (res.file_range() || res.streamed()) return Eligibility::NotInMemory;
    // Before the fields are looked at: most answers on a busy path (/hello) end here.
    if (res.body().size() < o.min_size) return Eligibility::TooSmall;
    if (status == 206) return Eligibility::Partial;
    // One pass over the fields, by the length of the name first (a static file's answer has
    // five, three of them 13 bytes long).
    for (HeaderField field : res.headers()) {
        const std::string_view name = field.name, value = field.value;
        switch (name.size()) {
            case 13:
                if (http::iequals(name, "Content-Range")) return Eligibility::Partial;
                if (http::iequals(name, "Cache-Control") && lists_token(value, "no-transform"))
                    return Eligibility::NoTransform;
                break;
            case 16:
                if (http::iequals(name, "Content-Encoding") && !value.empty())
                    return Eligibility::AlreadyEncoded;
                break;
            default:
                break;
        }
    }
    if (!types(res.content_type(), detail::ResponseAccess::type_is_literal(res)))
        return Eligibility::OtherType;
    return Eligibility::Compressible;
}

// Adds Accept-Encoding to Vary, unless some Vary field already lists it or "*".
void vary_on_accept_encoding(Response& res) {
    std::string merged;
    for (HeaderField field : res.headers()) {
        const std::string_view value = field.value;
        if (!http::iequals(field.name, "Vary")) continue;
        if (lists_token(value, "Accept-Encoding") || lists_token(value, "*")) return;
        if (http::byte_scan::trim_ows(value).empty()) continue;
        if (!merged.empty()) merged += ", ";
        merged += http::byte_scan::trim_ows(value);
    }
    if (merged.empty()) {
        detail::ResponseAccess::add_field(res, "Vary", "Accept-Encoding");
        return;
    }
    merged += ", Accept-Encoding";
    res.remove_header("Vary");
    res.header("Vary", merged);
}

// A strong ETag names the identity body's exact bytes; the encoded body gets the weak form,
// which If-None-Match still matches (weak comparison) and If-Range never does.
void weaken_etag(Response& res) {
    std::string_view etag = res.header("ETag");
    if (etag.empty() || etag.starts_with("W/")) return;
    std::string weak = "W/" + std::string(etag);
    res.remove_header("ETag");
    res.header("ETag", weak);
}

// Encodes the body in place when the result is smaller; otherwise leaves the response as it is
// (identity, with the Vary after() set). On the loop, or on a worker for a large body.
void encode(Response& res, ContentCoding coding, int level) {
    // The encoded body goes into a per-thread buffer that then trades places with the
    // response's: the identity body's allocation serves the next response of this thread.
    constexpr size_t kKeptScratch = 1 << 20;
    thread_local std::string scratch;
    if (!app::compress_body(coding, level, res.body(), res.body().size(), scratch))
        return;  // not smaller: identity it is
    std::swap(res.mutable_body(), scratch);
    if (scratch.capacity() > kKeptScratch) std::string().swap(scratch);
    res.header("Content-Encoding", content_coding_name(coding));
    weaken_etag(res);
    res.remove_header("Accept-Ranges");  // ranges are served of the identity body only
}

class Compression final : public Middleware, public std::enable_shared_from_this<Compression> {
public:
    explicit Compression(CompressionOptions options) : o_(std::move(options)), types_(o_.types) {}

    void after(const Request& req, Response& res) override {
        if (o_.codings.empty() || eligibility(res, o_, types_) != Eligibility::Compressible) return;
        // From here the body depends on Accept-Encoding, whichever coding this client gets.
        vary_on_accept_encoding(res);
        app::CodingChoice choice = app::choose_coding(req.header("Accept-Encoding"), o_.codings);
        if (choice.kind != app::CodingChoice::Kind::Coded) return;
        const size_t size = res.body().size();
        const int level = app::level_for_size(choice.coding, configured_level(choice.coding), size);
        if (size < app::kWorkerBodyBytes) return encode(res, choice.coding, level);
        // Large: on a worker once every after() has run, while the loop serves others. The
        // after()s that run after this one may change the response: it is checked again there.
        detail::ResponseAccess::leave_body_work(
            res, [self = shared_from_this(), coding = choice.coding, level](Response& r) {
                if (eligibility(r, self->o_, self->types_) == Eligibility::Compressible)
                    encode(r, coding, level);
            });
    }

private:
    int configured_level(ContentCoding coding) const {
        switch (coding) {
            case ContentCoding::Gzip:
                return o_.gzip_level;
            case ContentCoding::Brotli:
                return o_.brotli_level;
            case ContentCoding::Zstd:
                return o_.zstd_level;
        }
        return 0;
    }

    const CompressionOptions o_;
    const app::CompressibleTypes types_;
};

}  // namespace

std::shared_ptr<Middleware> compression(CompressionOptions options) {
    std::vector<ContentCoding> unique;
    for (ContentCoding c : options.codings) {
        bool seen = false;
        for (ContentCoding u : unique) seen = seen || u == c;
        if (!seen) unique.push_back(c);
    }
    options.codings = std::move(unique);
    if (!app::valid_level(ContentCoding::Gzip, options.gzip_level))
        throw std::invalid_argument("compression: gzip_level must be 1..9");
    if (!app::valid_level(ContentCoding::Brotli, options.brotli_level))
        throw std::invalid_argument("compression: brotli_level must be 0..11");
    if (!app::valid_level(ContentCoding::Zstd, options.zstd_level))
        throw std::invalid_argument("compression: zstd_level must be 1..22");
    for (const std::string& t : options.types)
        if (!app::valid_type_pattern(t))
            throw std::invalid_argument("compression: \"" + t +
                                        "\" is not type/subtype, type/* or type/*+suffix");
    return std::make_shared<Compression>(std::move(options));
}

}  // namespace rivet
