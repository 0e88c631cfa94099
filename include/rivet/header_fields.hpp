// rivet::HeaderFields: a request's header fields as a view, in the order they were sent.
//
//   for (rivet::HeaderField f : req.headers()) std::cout << f.name << ": " << f.value << "\n";
//
// The views point into the request's bytes and live as long as the Request they came from.
#pragma once

#include <cstddef>
#include <iterator>
#include <string_view>

namespace rivet {

// One field, as views. A request's (HeaderFields): the name as sent, the value without leading
// and trailing whitespace. A response's (ResponseHeaders): both as Response::header() set them.
struct HeaderField {
    std::string_view name;
    std::string_view value;
};

namespace detail {

// An input iterator over fields that are read by index (HeaderFields, ResponseHeaders).
template <class Fields>
class FieldIterator {
public:
    using iterator_category = std::input_iterator_tag;
    using value_type = HeaderField;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = HeaderField;

    FieldIterator(const Fields* fields, size_t index) : fields_(fields), index_(index) {}
    HeaderField operator*() const { return (*fields_)[index_]; }
    FieldIterator& operator++() {
        ++index_;
        return *this;
    }
    FieldIterator operator++(int) {
        FieldIterator before = *this;
        ++index_;
        return before;
    }
    bool operator==(const FieldIterator& other) const { return index_ == other.index_; }

private:
    const Fields* fields_;
    size_t index_;
};

}  // namespace detail

class HeaderFields {
public:
    using iterator = detail::FieldIterator<HeaderFields>;

    HeaderFields() = default;

    size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    HeaderField operator[](size_t i) const;  // i < size()
    iterator begin() const { return {this, 0}; }
    iterator end() const { return {this, size_}; }

    // The first field named `name` (case-insensitive), or "" when there is none.
    std::string_view find(std::string_view name) const;
    bool contains(std::string_view name) const;

private:
    friend class Request;
    // The parser's own field array, opaque here so that the public headers stand alone.
    HeaderFields(const void* fields, size_t size) : fields_(fields), size_(size) {}
    const void* fields_ = nullptr;
    size_t size_ = 0;
};

}  // namespace rivet
