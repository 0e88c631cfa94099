// The parts of response_writer.hpp that are tables and checks rather than the writing itself:
// what a field value may not hold, which fields a trailer may not carry, the reason phrases, and
// the Date field's format. Kept apart so that response_writer.cpp is the serializer alone.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <ctime>

#include "http/request_parser.hpp"
#include "http/response_writer.hpp"

namespace rivet::http {

namespace {

// CR, LF and NUL are all below 0x0E: a word is cleared by one test that none of its bytes is
// below it (exact for a bound under 0x80), and only a word that fails it (a value with a TAB,
// say) is looked at byte by byte. Every field a handler sets passes here: eight bytes a step, the
// last step overlapping the one before, four and four below eight.
bool forbidden_byte(unsigned char c) {
    return c == '\r' || c == '\n' || c == '\0';
}

template <class Word>
bool holds_forbidden(const unsigned char* p) {
    constexpr Word ones = Word(0x0101010101010101ULL), highs = Word(0x8080808080808080ULL);
    Word x;
    std::memcpy(&x, p, sizeof x);
    if (((x - ones * 0x0E) & ~x & highs) == 0) return false;
    for (size_t i = 0; i < sizeof x; ++i)
        if (forbidden_byte(p[i])) return true;
    return false;
}

}  // namespace

bool field_value_forbidden(std::string_view value) {
    const auto* p = reinterpret_cast<const unsigned char*>(value.data());
    const size_t n = value.size();
    if (n >= 8) {
        for (size_t i = 0; i + 8 < n; i += 8)
            if (holds_forbidden<uint64_t>(p + i)) return true;
        return holds_forbidden<uint64_t>(p + n - 8);
    }
    if (n >= 4) return holds_forbidden<uint32_t>(p) || holds_forbidden<uint32_t>(p + n - 4);
    for (size_t i = 0; i < n; ++i)
        if (forbidden_byte(p[i])) return true;
    return false;
}

void format_http_date(int64_t unix_seconds, char out[29]) {
    static const char kDays[] = "SunMonTueWedThuFriSat";
    static const char kMonths[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
    // An IMF-fixdate has a four-digit year: a time outside years 1 to 9999 (a file's mtime can be
    // anything a filesystem keeps) is written as the nearest end, never as digits that are not
    // ('0' - 35 is CR), nor from a tm that gmtime_r could not fill (a year past INT_MAX).
    constexpr int64_t kFirst = -62135596800;  // 0001-01-01T00:00:00Z
    constexpr int64_t kLast = 253402300799;   // 9999-12-31T23:59:59Z
    static_assert(sizeof(time_t) == 8, "a 64-bit time_t: gmtime_r fills any time in range");
    const time_t t = time_t(std::clamp(unix_seconds, kFirst, kLast));
    tm g{};
    gmtime_r(&t, &g);
    auto two = [](char* p, int v) {
        p[0] = char('0' + v / 10);
        p[1] = char('0' + v % 10);
    };
    std::memcpy(out, kDays + 3 * g.tm_wday, 3);
    out[3] = ',';
    out[4] = ' ';
    two(out + 5, g.tm_mday);
    out[7] = ' ';
    std::memcpy(out + 8, kMonths + 3 * g.tm_mon, 3);
    out[11] = ' ';
    int year = g.tm_year + 1900;
    two(out + 12, year / 100);
    two(out + 14, year % 100);
    out[16] = ' ';
    two(out + 17, g.tm_hour);
    out[19] = ':';
    two(out + 20, g.tm_min);
    out[22] = ':';
    two(out + 23, g.tm_sec);
    std::memcpy(out + 25, " GMT", 4);
}

std::string_view DateCache::block(int64_t unix_seconds) {
    if (unix_seconds != second_) {
        second_ = unix_seconds;
        std::memcpy(buf_, "Date: ", 6);
        format_http_date(unix_seconds, buf_ + 6);
        static constexpr std::string_view kTail = "\r\nServer: rivet\r\n";
        std::memcpy(buf_ + 35, kTail.data(), kTail.size());
        len_ = 35 + kTail.size();
    }
    return {buf_, len_};
}

std::string_view status_reason(int status) {
    switch (status) {
        case 100:
            return "Continue";
        case 101:
            return "Switching Protocols";
        case 200:
            return "OK";
        case 201:
            return "Created";
        case 202:
            return "Accepted";
        case 204:
            return "No Content";
        case 206:
            return "Partial Content";
        case 301:
            return "Moved Permanently";
        case 302:
            return "Found";
        case 303:
            return "See Other";
        case 304:
            return "Not Modified";
        case 307:
            return "Temporary Redirect";
        case 308:
            return "Permanent Redirect";
        case 400:
            return "Bad Request";
        case 401:
            return "Unauthorized";
        case 403:
            return "Forbidden";
        case 404:
            return "Not Found";
        case 405:
            return "Method Not Allowed";
        case 408:
            return "Request Timeout";
        case 409:
            return "Conflict";
        case 411:
            return "Length Required";
        case 412:
            return "Precondition Failed";
        case 413:
            return "Content Too Large";
        case 414:
            return "URI Too Long";
        case 415:
            return "Unsupported Media Type";
        case 416:
            return "Range Not Satisfiable";
        case 417:
            return "Expectation Failed";
        case 422:
            return "Unprocessable Content";
        case 426:
            return "Upgrade Required";
        case 429:
            return "Too Many Requests";
        case 431:
            return "Request Header Fields Too Large";
        case 500:
            return "Internal Server Error";
        case 501:
            return "Not Implemented";
        case 502:
            return "Bad Gateway";
        case 503:
            return "Service Unavailable";
        case 504:
            return "Gateway Timeout";
        case 505:
            return "HTTP Version Not Supported";
        default:
            return "Unknown";
    }
}

bool trailer_field_allowed(std::string_view name) {
    // RFC 9110 §6.5.1: framing, routing, request modifiers, authentication, response control
    // data and what the content's processing needs (Content-*, Trailer) are known before the
    // body or not at all; the connection's own fields (RFC 9113 §8.2.2 forbids them in HTTP/2
    // anywhere).
    // clang-format off
    static constexpr std::string_view kRefused[] = {
        "Age", "Authorization", "Cache-Control", "Connection", "Content-Encoding",
        "Content-Length", "Content-Range", "Content-Type", "Date", "Expect", "Expires", "Host",
        "If-Match", "If-Modified-Since", "If-None-Match", "If-Range", "If-Unmodified-Since",
        "Keep-Alive", "Last-Modified", "Location", "Max-Forwards", "Pragma",
        "Proxy-Authenticate", "Proxy-Authorization", "Proxy-Connection", "Range",
        "Retry-After", "Set-Cookie", "TE", "Trailer", "Transfer-Encoding", "Upgrade", "Vary",
        "Warning", "WWW-Authenticate"};
    // clang-format on
    for (std::string_view refused : kRefused)
        if (iequals(name, refused)) return false;
    return true;
}

}  // namespace rivet::http
