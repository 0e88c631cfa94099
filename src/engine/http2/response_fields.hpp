// ResponseFields: an answer's head as HTTP/2 sends it, an nghttp2 header list (HPACK encodes
// it). The answer's fields are HTTP/1.1's (the application writes them once for both): names are
// lowercased and the connection's own fields (Connection, Transfer-Encoding ...) left out, as
// RFC 9113 §8.2 asks. One per session, reused: nghttp2 copies the list when it is submitted.
#pragma once

#include <nghttp2/nghttp2.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "http/field_lines.hpp"

namespace rivet::engine {

class ResponseFields {
public:
    // `date_block`: the loop's "Date: ...\r\nServer: rivet\r\n".
    void start(int status, std::string_view date_block);
    void clear();  // no fields: a trailer list follows
    void add(std::string_view name, std::string_view value);
    // "Name: value\r\n" lines (Answer::extra_fields, a response's fields).
    void add_lines(http::FieldLines lines);
    void add_length(uint64_t length);
    // The list, valid until the next start().
    const nghttp2_nv* list();
    size_t size() const { return fields_.size(); }

private:
    struct Span {
        uint32_t offset, size;
    };
    Span keep(std::string_view bytes, bool lower);

    std::string storage_;
    std::vector<std::pair<Span, Span>> fields_;
    std::vector<nghttp2_nv> nv_;
};

}  // namespace rivet::engine
