#include "engine/http2/response_fields.hpp"

#include "http/http2/request_head.hpp"
#include "http/response_writer.hpp"

namespace rivet::engine {

ResponseFields::Span ResponseFields::keep(std::string_view bytes, bool lower) {
    Span s{uint32_t(storage_.size()), uint32_t(bytes.size())};
    storage_.append(bytes);
    if (lower)
        for (size_t i = s.offset; i < storage_.size(); ++i)
            if (storage_[i] >= 'A' && storage_[i] <= 'Z') storage_[i] = char(storage_[i] + 32);
    return s;
}

void ResponseFields::clear() {
    storage_.clear();
    fields_.clear();
}

void ResponseFields::start(int status, std::string_view date_block) {
    clear();
    char code[4] = {char('0' + status / 100 % 10), char('0' + status / 10 % 10),
                    char('0' + status % 10), 0};
    fields_.push_back({keep(":status", false), keep({code, 3}, false)});
    // "Date: " + 29 characters; "Server: rivet" after it.
    constexpr std::string_view kDate = "Date: ";
    if (date_block.size() >= kDate.size() + 29)
        fields_.push_back({keep("date", false), keep(date_block.substr(kDate.size(), 29), false)});
    fields_.push_back({keep("server", false), keep("rivet", false)});
}

void ResponseFields::add(std::string_view name, std::string_view value) {
    if (name.empty() || http::http2::connection_specific(name)) return;
    fields_.push_back({keep(name, true), keep(value, false)});
}

void ResponseFields::add_lines(http::FieldLines lines) {
    for (http::Header field : lines) add(field.name, field.value);
}

void ResponseFields::add_length(uint64_t length) {
    char digits[24];
    size_t n = 0;
    do {
        digits[sizeof digits - 1 - n++] = char('0' + length % 10);
        length /= 10;
    } while (length);
    fields_.push_back(
        {keep("content-length", false), keep({digits + sizeof digits - n, n}, false)});
}

const nghttp2_nv* ResponseFields::list() {
    nv_.clear();
    auto* base = reinterpret_cast<uint8_t*>(storage_.data());
    for (const auto& [name, value] : fields_)
        nv_.push_back(
            {base + name.offset, base + value.offset, name.size, value.size, NGHTTP2_NV_FLAG_NONE});
    return nv_.data();
}

}  // namespace rivet::engine
