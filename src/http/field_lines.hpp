// FieldLines: header fields as the bytes an HTTP/1 head carries them in, "Name: value\r\n" for
// each, in order. A response's fields are kept this way from the start (rivet::ResponseHeaders),
// so HTTP/1 writes them with one copy; HTTP/2, which sends each field apart, reads them back one
// by one here, as it does an Answer's extra fields.
#pragma once

#include <cstddef>
#include <iterator>
#include <string_view>

#include "http/request_parser.hpp"

namespace rivet::http {

struct FieldLines {
    // Well-formed lines: a name that is a token, ": " (or ":"), a value without CR, LF or NUL,
    // CRLF. The writers of these lines check that; a reader here only splits them.
    std::string_view text;

    class iterator {
    public:
        using iterator_category = std::input_iterator_tag;
        using value_type = Header;
        using difference_type = std::ptrdiff_t;
        using pointer = void;
        using reference = Header;

        iterator() = default;
        explicit iterator(std::string_view rest) : rest_(rest) { read(); }
        Header operator*() const { return current_; }
        iterator& operator++() {
            read();
            return *this;
        }
        bool operator==(const iterator& other) const {
            return rest_.data() == other.rest_.data() && done_ == other.done_;
        }

    private:
        // Splits off the next line into current_; done_ once none is left. A line without a
        // colon is no field (none of rivet's writers makes one) and is skipped.
        void read() {
            for (;;) {
                if (rest_.empty()) {
                    done_ = true;
                    return;
                }
                const size_t end = rest_.find("\r\n");
                const std::string_view line = rest_.substr(0, end);
                rest_ = end == std::string_view::npos ? rest_.substr(rest_.size())
                                                      : rest_.substr(end + 2);
                const size_t colon = line.find(':');
                if (colon == std::string_view::npos) continue;
                std::string_view value = line.substr(colon + 1);
                while (!value.empty() && (value.front() == ' ' || value.front() == '\t'))
                    value.remove_prefix(1);
                current_ = {line.substr(0, colon), value};
                return;
            }
        }

        std::string_view rest_;
        Header current_;
        bool done_ = false;
    };

    iterator begin() const { return iterator(text); }
    iterator end() const { return iterator(text.substr(text.size())); }
    bool empty() const { return text.empty(); }
};

}  // namespace rivet::http
