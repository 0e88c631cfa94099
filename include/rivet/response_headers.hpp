// rivet::ResponseHeaders: the fields a Response carries, in the order they are sent.
//
//   for (rivet::HeaderField f : res.headers()) std::cout << f.name << ": " << f.value << "\n";
//
// Set them with Response::header(); this is the read side. The fields own their bytes, kept as
// the lines an HTTP/1 head sends ("Name: value\r\n"): in a buffer inside the object for the
// usual few (a static file's five, a JSON answer's CORS fields), on the heap past it. So a
// response's fields cost no allocation, and HTTP/1 writes them with one copy.
//
// The views it gives (find(), [], the iteration, Response::header(name)) point into the
// Response itself: they are good until its fields change or it is moved, copied over or
// destroyed. Keep a std::string of a value that must outlive that. A view passed straight back
// to header() is fine: header("X-Copy", res.header("ETag")).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <rivet/header_fields.hpp>

namespace rivet {

class Response;
namespace detail {
struct ResponseAccess;
}

class ResponseHeaders {
public:
    using iterator = detail::FieldIterator<ResponseHeaders>;

    ResponseHeaders() = default;
    ResponseHeaders(const ResponseHeaders& other);
    ResponseHeaders(ResponseHeaders&& other) noexcept;
    ResponseHeaders& operator=(const ResponseHeaders& other);
    ResponseHeaders& operator=(ResponseHeaders&& other) noexcept;
    ~ResponseHeaders() = default;

    size_t size() const { return count_; }
    bool empty() const { return count_ == 0; }
    HeaderField operator[](size_t i) const {  // i < size()
        const Line& l = line(i);
        const char* t = text() + l.at;
        return {{t, l.name_size}, {t + l.name_size + 2, l.value_size}};
    }
    iterator begin() const { return {this, 0}; }
    iterator end() const { return {this, count_}; }

    // The first field named `name` (case-insensitive), or "" when there is none.
    std::string_view find(std::string_view name) const;
    bool contains(std::string_view name) const;

    // The most the fields' lines ("Name: value\r\n" each) may take together, 16 MiB:
    // Response::header() throws std::length_error past it and keeps what it had.
    static size_t max_bytes() { return kMaxBytes; }

    // The same fields, in the same order, byte for byte.
    bool operator==(const ResponseHeaders& other) const { return lines() == other.lines(); }

private:
    friend class Response;
    friend struct detail::ResponseAccess;

    // Where one field's line starts in the text, and its name's and value's sizes: the line is
    // name ": " value "\r\n".
    struct Line {
        uint32_t at;
        uint32_t name_size;
        uint32_t value_size;
    };
    // Room for what most responses carry; a static file's five fields take 135 bytes.
    static constexpr size_t kInlineBytes = 192;
    static constexpr size_t kInlineLines = 8;
    // The most all the fields together may take: far past any head a client reads (browsers
    // and proxies refuse heads of a few hundred KiB), and within the 32-bit offsets.
    static constexpr size_t kMaxBytes = size_t(16) << 20;

    // Checked by the caller (Response): `name` a token, `value` without CR, LF or NUL.
    void append(std::string_view name, std::string_view value);
    void remove(std::string_view name);  // every field of that name, case-insensitive
    std::string_view lines() const { return {text(), bytes_}; }
    void copy_inline(const ResponseHeaders& other);  // the used part of the room

    const char* text() const {
        return heap_text_.empty() ? inline_text_.data() : heap_text_.data();
    }
    const Line& line(size_t i) const {
        return i < kInlineLines ? inline_lines_[i] : more_lines_[i - kInlineLines];
    }

    uint32_t bytes_ = 0;  // of text()
    uint32_t count_ = 0;
    // The text lives inline until a line does not fit; from then on in heap_text_ (non-empty).
    // Left uninitialized: only the first bytes_ and count_ are ever read (or copied), so a
    // response that sets no field pays nothing for the room.
    std::array<char, kInlineBytes> inline_text_;
    std::string heap_text_;
    std::array<Line, kInlineLines> inline_lines_;
    std::vector<Line> more_lines_;  // the lines past kInlineLines
};

}  // namespace rivet
