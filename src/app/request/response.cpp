#include <rivet/response.hpp>

#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>

#include "app/request/trailers_access.hpp"
#include "app/static/mime_types.hpp"
#include "http/request_parser.hpp"
#include "http/response_writer.hpp"

namespace rivet {

namespace {

void check_value(std::string_view value, std::string_view what, std::string_view name = {}) {
    if (http::field_value_forbidden(value))
        throw std::invalid_argument(std::string(what) + std::string(name) + " holds CR, LF or NUL");
}

// The fields the server writes itself (the framing and the Date) or that are kept apart
// (Content-Type, Connection), by length first: most names are none of them.
enum class Reserved : uint8_t { None, ContentType, ByServer, Connection };

Reserved reserved(std::string_view name) {
    switch (name.size()) {
        case 4:
            return http::iequals(name, "Date") ? Reserved::ByServer : Reserved::None;
        case 10:
            return http::iequals(name, "Connection") ? Reserved::Connection : Reserved::None;
        case 12:
            return http::iequals(name, "Content-Type") ? Reserved::ContentType : Reserved::None;
        case 14:
            return http::iequals(name, "Content-Length") ? Reserved::ByServer : Reserved::None;
        case 17:
            return http::iequals(name, "Transfer-Encoding") ? Reserved::ByServer : Reserved::None;
        default:
            return Reserved::None;
    }
}

}  // namespace

Response& Response::status(int code) {
    // 1xx are interim answers the server sends itself (100 Continue); a handler's is final.
    if (code < 200 || code > 599)
        throw std::invalid_argument("invalid status code " + std::to_string(code));
    status_ = code;
    upgrade_.reset();  // an error answer in place of a 101 hands nothing over
    return *this;
}

Response& Response::text(std::string_view body) {
    shared_body_.reset();
    body_.assign(body);
    set_static_type("text/plain; charset=utf-8");
    return *this;
}

Response& Response::html(std::string_view body) {
    shared_body_.reset();
    body_.assign(body);
    set_static_type("text/html; charset=utf-8");
    return *this;
}

Response& Response::json(const nlohmann::json& value) {
    shared_body_.reset();
    // Strings from the outside may hold invalid UTF-8 (a query's %FF): shown as U+FFFD rather
    // than failing the whole response.
    body_ = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    set_static_type("application/json");
    return *this;
}

Response& Response::body(std::string_view body, std::string_view content_type) {
    shared_body_.reset();
    body_.assign(body);
    return this->content_type(content_type);
}

Response& Response::body(std::string&& body, std::string_view content_type) {
    shared_body_.reset();
    body_ = std::move(body);
    return this->content_type(content_type);
}

Response& Response::body(std::shared_ptr<const std::string> shared, std::string_view content_type) {
    body_.clear();
    shared_body_ = std::move(shared);
    return this->content_type(content_type);
}

std::string& Response::mutable_body() {
    if (shared_body_) {
        body_.assign(*shared_body_);
        shared_body_.reset();
    }
    return body_;
}

Response& Response::content_type(std::string_view type) {
    check_value(type, "Content-Type");
    if (std::string_view literal = files::interned_content_type(type); !literal.empty()) {
        set_static_type(literal);  // a common type: no copy, no allocation per response
        return *this;
    }
    own_type_.assign(type);
    if (own_type_.empty()) static_type_ = {};
    return *this;
}

Response& Response::header(std::string_view name, std::string_view value) {
    if (name.empty()) throw std::invalid_argument("empty header name");
    if (!http::is_token(name))
        throw std::invalid_argument("invalid header name: " + std::string(name));
    check_value(value, "header ", name);
    switch (reserved(name)) {
        case Reserved::None:
            break;
        case Reserved::ContentType:
            return content_type(value);
        case Reserved::ByServer:
            throw std::invalid_argument(std::string(name) + " is set by the server");
        case Reserved::Connection:
            if (http::iequals(value, "close")) close_ = true;
            return *this;
    }
    append_field(name, value);
    return *this;
}

void Response::append_field(std::string_view name, std::string_view value) {
    headers_.append(name, value);
}

std::string_view Response::header(std::string_view name) const {
    return headers_.find(name);
}

Response& Response::remove_header(std::string_view name) {
    headers_.remove(name);
    return *this;
}

namespace {

void check_trailer(std::string_view name, std::string_view value) {
    if (name.empty()) throw std::invalid_argument("empty trailer name");
    if (!http::is_token(name))
        throw std::invalid_argument("invalid trailer name: " + std::string(name));
    if (!http::trailer_field_allowed(name))
        throw std::invalid_argument(std::string(name) + " may not be sent as a trailer");
    check_value(value, "trailer ", name);
}

}  // namespace

Trailers& Trailers::add(std::string_view name, std::string_view value) {
    if (!fields_) throw std::logic_error("Trailers::add on a handle of no response");
    check_trailer(name, value);
    fields_->fields.emplace_back(name, value);
    return *this;
}

std::string_view Trailers::get(std::string_view name) const {
    if (fields_)
        for (auto& [n, v] : fields_->fields)
            if (http::iequals(n, name)) return v;
    return {};
}

const std::vector<std::pair<std::string, std::string>>& Trailers::fields() const {
    static const std::vector<std::pair<std::string, std::string>> kNone;
    return fields_ ? fields_->fields : kNone;
}

Trailers Response::trailers() {
    if (!trailers_) trailers_.fields_ = std::make_shared<detail::TrailerFields>();
    return trailers_;
}

Response& Response::trailer(std::string_view name, std::string_view value) {
    check_trailer(name, value);  // first: a refused field leaves the response without trailers
    trailers().fields_->fields.emplace_back(name, value);
    return *this;
}

OpenFile::~OpenFile() {
    if (fd_ >= 0) ::close(fd_);
}

Response& Response::file(FileRange range, std::string_view content_type) {
    shared_body_.reset();
    body_.clear();
    producer_.reset();
    waiting_.reset();
    file_ = std::move(range);
    return this->content_type(content_type);
}

Response& Response::stream(BodyProducer producer, std::string_view content_type) {
    shared_body_.reset();
    producer_ = std::make_shared<BodyProducer>(std::move(producer));
    waiting_.reset();
    file_ = {};
    return this->content_type(content_type);
}

Response& Response::stream(WaitingProducer producer, std::string_view content_type) {
    shared_body_.reset();
    waiting_ = std::make_shared<WaitingProducer>(std::move(producer));
    producer_.reset();
    file_ = {};
    return this->content_type(content_type);
}

}  // namespace rivet
