#include <rivet/response_headers.hpp>

#include <cstring>
#include <stdexcept>
#include <utility>

#include "core/short_copy.hpp"
#include "http/request_parser.hpp"

namespace rivet {

ResponseHeaders::ResponseHeaders(const ResponseHeaders& other)
    : bytes_(other.bytes_),
      count_(other.count_),
      heap_text_(other.heap_text_),
      more_lines_(other.more_lines_) {
    copy_inline(other);
}

ResponseHeaders::ResponseHeaders(ResponseHeaders&& other) noexcept
    : bytes_(other.bytes_),
      count_(other.count_),
      heap_text_(std::move(other.heap_text_)),
      more_lines_(std::move(other.more_lines_)) {
    copy_inline(other);
    other.heap_text_.clear();
    other.more_lines_.clear();
    other.bytes_ = other.count_ = 0;
}

ResponseHeaders& ResponseHeaders::operator=(const ResponseHeaders& other) {
    if (this != &other) *this = ResponseHeaders(other);
    return *this;
}

ResponseHeaders& ResponseHeaders::operator=(ResponseHeaders&& other) noexcept {
    if (this == &other) return *this;
    bytes_ = other.bytes_;
    count_ = other.count_;
    heap_text_ = std::move(other.heap_text_);
    more_lines_ = std::move(other.more_lines_);
    copy_inline(other);
    other.heap_text_.clear();
    other.more_lines_.clear();
    other.bytes_ = other.count_ = 0;
    return *this;
}

void ResponseHeaders::copy_inline(const ResponseHeaders& other) {
    // Called with bytes_ and count_ already other's; the text is inline only while
    // heap_text_ is empty (and then other's was too).
    if (heap_text_.empty() && bytes_ > 0)
        std::memcpy(inline_text_.data(), other.inline_text_.data(), bytes_);
    const size_t lines = count_ < kInlineLines ? count_ : kInlineLines;
    if (lines > 0)
        std::memcpy(inline_lines_.data(), other.inline_lines_.data(), lines * sizeof(Line));
}

std::string_view ResponseHeaders::find(std::string_view name) const {
    for (size_t i = 0; i < count_; ++i) {
        const Line& l = line(i);
        if (http::iequals({text() + l.at, l.name_size}, name))
            return {text() + l.at + l.name_size + 2, l.value_size};
    }
    return {};
}

bool ResponseHeaders::contains(std::string_view name) const {
    for (size_t i = 0; i < count_; ++i)
        if (http::iequals({text() + line(i).at, line(i).name_size}, name)) return true;
    return false;
}

namespace {

// name ": " value "\r\n" at `to`.
[[gnu::always_inline]] inline void write_line(char* to, std::string_view name,
                                              std::string_view value) {
    core::copy_short(to, name.data(), name.size());
    std::memcpy(to + name.size(), ": ", 2);
    core::copy_short(to + name.size() + 2, value.data(), value.size());  // none for n == 0
    std::memcpy(to + name.size() + 2 + value.size(), "\r\n", 2);
}

}  // namespace

void ResponseHeaders::append(std::string_view name, std::string_view value) {
    const size_t size = name.size() + value.size() + 4;
    if (size > kMaxBytes - bytes_) throw std::length_error("response fields over 16 MiB");
    const size_t needed = bytes_ + size;
    // `name` or `value` may be a view of these very fields (header("X", header("ETag"))): the
    // bytes they point to must stay where they are until the line is written. Inline text and
    // heap text with room to spare never move; a buffer that must grow is a new one, and the
    // old one (or the inline room) is let go only after the copy.
    if (heap_text_.empty() && needed <= kInlineBytes) {
        write_line(inline_text_.data() + bytes_, name, value);
    } else if (!heap_text_.empty() && needed <= heap_text_.capacity()) {
        heap_text_.resize(needed);
        write_line(heap_text_.data() + bytes_, name, value);
    } else {
        std::string grown;
        grown.reserve(2 * needed);
        grown.assign(text(), bytes_);
        grown.resize(needed);
        write_line(grown.data() + bytes_, name, value);
        heap_text_.swap(grown);
    }
    const Line l{bytes_, uint32_t(name.size()), uint32_t(value.size())};
    if (count_ < kInlineLines)
        inline_lines_[count_] = l;
    else
        more_lines_.push_back(l);
    ++count_;
    bytes_ = uint32_t(needed);
}

void ResponseHeaders::remove(std::string_view name) {
    if (!contains(name)) return;
    ResponseHeaders kept;
    for (HeaderField f : *this)
        if (!http::iequals(f.name, name)) kept.append(f.name, f.value);
    *this = std::move(kept);
}

}  // namespace rivet
