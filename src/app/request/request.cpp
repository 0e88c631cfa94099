#include <rivet/request.hpp>

#include <rivet/http_error.hpp>

#include "app/request/method.hpp"
#include "app/request/query.hpp"
#include "app/request/request_access.hpp"
#include "app/routing/router.hpp"
#include "core/bounded_text.hpp"
#include "core/json_depth.hpp"
#include "engine/exchange.hpp"
#include "http/cookie.hpp"
#include "http/request_parser.hpp"

namespace rivet {

namespace {
// Enough for nlohmann's message and a token long enough to recognise.
constexpr size_t kMaxJsonErrorBytes = 200;
}  // namespace

std::string_view method_name(Method m) {
    return http::method_name(app::protocol_method(m));
}

HeaderField HeaderFields::operator[](size_t i) const {
    const http::Header& h = static_cast<const http::Header*>(fields_)[i];
    return {h.name, h.value};
}

std::string_view HeaderFields::find(std::string_view name) const {
    return http::find_header({static_cast<const http::Header*>(fields_), size_}, name);
}

bool HeaderFields::contains(std::string_view name) const {
    for (const http::Header& h : std::span(static_cast<const http::Header*>(fields_), size_))
        if (http::iequals(h.name, name)) return true;
    return false;
}

// The bytes of a detached request: one string for every view, plus its own header array.
struct Request::Owned {
    std::string arena;
    std::vector<http::Header> headers;
    http::RequestHead head;
    app::RouteParams params;
    engine::TlsFacts tls;  // its views point into the arena
};

Request::Request(const http::RequestHead& head, std::string_view body,
                 const app::RouteParams& params, const engine::Exchange* exchange)
    : head_(&head), body_(body), params_(&params), exchange_(exchange) {}

const std::string& Request::peer_address() const {
    if (peer_.empty() && exchange_) peer_ = exchange_->peer_address();
    return peer_;
}

unsigned Request::loop_index() const {
    return exchange_ ? exchange_->loop_index() : kNoLoop;
}

bool Request::secure() const {
    if (exchange_) return exchange_->tls().secure;
    return owned_ && owned_->tls.secure;
}

std::string_view Request::tls_server_name() const {
    if (exchange_) return exchange_->tls().server_name;
    return owned_ ? owned_->tls.server_name : std::string_view{};
}

engine::TlsFacts app::RequestAccess::tls(const Request& req) {
    if (req.exchange_) return req.exchange_->tls();
    return req.owned_ ? req.owned_->tls : engine::TlsFacts{};
}

Method Request::method() const {
    return app::public_method(head_->method);
}
std::string_view Request::method_name() const {
    return head_->method_name;
}
std::string_view Request::target() const {
    return head_->target;
}
std::string_view Request::path() const {
    return head_->path;
}
std::string_view Request::query_string() const {
    return head_->query;
}
int Request::version_major() const {
    return head_->version_major;
}
int Request::version_minor() const {
    return head_->version_minor;
}
std::string_view Request::param(std::string_view name) const {
    return params_->get(name);
}

HeaderFields Request::headers() const {
    return {head_->headers.data(), head_->headers.size()};
}

std::string_view Request::header(std::string_view name) const {
    return http::find_header(head_->headers, name);
}

std::optional<std::string_view> Request::cookie(std::string_view name) const {
    if (name.empty()) return std::nullopt;
    for (const auto& field : head_->headers)
        if (http::iequals(field.name, "Cookie"))
            if (auto value = http::find_cookie(field.value, name)) return value;
    return std::nullopt;
}

bool Request::has_header(std::string_view name) const {
    return headers().contains(name);
}

const std::vector<std::pair<std::string, std::string>>& Request::query_params() const {
    if (!query_)
        query_ = std::make_shared<std::vector<std::pair<std::string, std::string>>>(
            app::parse_query(head_->query));
    return *query_;
}

std::optional<std::string> Request::query(std::string_view key) const {
    for (const auto& [k, v] : query_params())
        if (k == key) return v;
    return std::nullopt;
}

nlohmann::json Request::json(const JsonLimits& limits) const {
    if (body_.size() > limits.max_bytes)
        throw HttpError(413, "JSON body over max_bytes (" + std::to_string(limits.max_bytes) +
                                 "): " + std::to_string(body_.size()) + " bytes");
    if (size_t at = core::json_too_deep_at(body_, limits.max_depth); at != std::string_view::npos)
        throw HttpError(400, "invalid JSON body: nested deeper than " +
                                 std::to_string(limits.max_depth) + " levels (at byte " +
                                 std::to_string(at) + ")");
    try {
        return nlohmann::json::parse(body_);
    } catch (const nlohmann::json::exception& e) {
        // A client's mistake (a syntax error, or a number beyond a double's range, which nlohmann
        // reports as out_of_range), so a 400 that says where; without nlohmann's
        // "[json.exception...]" prefix, which names our library rather than the problem. The
        // message quotes the token it stopped at, as long as the client made it: cut it.
        std::string_view what = e.what();
        if (auto end = what.find("] "); what.starts_with("[json.exception") && end != what.npos)
            what.remove_prefix(end + 2);
        throw HttpError(400, "invalid JSON body: " + core::bounded_text(what, kMaxJsonErrorBytes));
    }
}

Context& Request::context() const {
    if (!context_) context_ = std::make_shared<Context>();
    return *context_;
}

Request Request::detach() const {
    return detach_copy(true);
}

Request Request::detach_copy(bool with_body) const {
    Request copy(*this);
    std::string_view body = with_body ? body_ : std::string_view{};
    copy.peer_ = peer_address();
    copy.exchange_ = nullptr;
    auto owned = std::make_shared<Owned>();
    owned->head = *head_;
    owned->params = *params_;

    // A detached copy of a detached request has no exchange: its facts come from the copy.
    const engine::TlsFacts tls = app::RequestAccess::tls(*this);
    size_t total = head_->method_name.size() + head_->target.size() + head_->authority.size() +
                   body.size() + tls.server_name.size() + tls.version.size() + tls.cipher.size() +
                   tls.alpn.size();
    for (const auto& h : head_->headers) total += h.name.size() + h.value.size();
    for (size_t i = 0; i < params_->size; ++i)
        total += params_->names[i].size() + params_->values[i].size();
    owned->arena.reserve(total);  // no reallocation below: the views stay put

    auto keep = [&](std::string_view v) -> std::string_view {
        size_t at = owned->arena.size();
        owned->arena.append(v);
        return {owned->arena.data() + at, v.size()};
    };
    // path and query are pieces of the target; move them along with it.
    auto inside = [](std::string_view whole, std::string_view part, std::string_view moved) {
        if (part.empty() || part.data() < whole.data() ||
            part.data() + part.size() > whole.data() + whole.size())
            return std::string_view{};
        return moved.substr(size_t(part.data() - whole.data()), part.size());
    };

    owned->head.method_name = keep(head_->method_name);
    owned->head.target = keep(head_->target);
    owned->head.path = inside(head_->target, head_->path, owned->head.target);
    // The one path not taken from the target is the parser's literal "/" (absolute form with an
    // empty path): static, so the view stays valid as it is.
    if (owned->head.path.empty()) owned->head.path = head_->path;
    owned->head.query = inside(head_->target, head_->query, owned->head.target);
    owned->head.authority = keep(head_->authority);
    owned->headers.reserve(head_->headers.size());
    for (const auto& h : head_->headers) owned->headers.push_back({keep(h.name), keep(h.value)});
    owned->head.headers = owned->headers;
    for (size_t i = 0; i < params_->size; ++i) {
        owned->params.names[i] = keep(params_->names[i]);
        owned->params.values[i] = keep(params_->values[i]);
    }
    owned->tls = {tls.secure,        tls.resumed,      keep(tls.server_name),
                  keep(tls.version), keep(tls.cipher), keep(tls.alpn)};
    copy.body_ = keep(body);
    copy.head_ = &owned->head;
    copy.params_ = &owned->params;
    copy.owned_ = std::move(owned);
    return copy;
}

}  // namespace rivet
