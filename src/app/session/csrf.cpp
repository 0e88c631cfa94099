// The csrf() middleware: unsafe methods must echo the session's token (Session::csrf_token).
#include <rivet/csrf.hpp>
#include <rivet/http_error.hpp>
#include <rivet/session.hpp>

#include <stdexcept>

#include "app/request/query.hpp"
#include "app/session/session_engine.hpp"
#include "app/session/signer.hpp"
#include "http/byte_scan.hpp"
#include "http/request_parser.hpp"

namespace rivet {

namespace {

bool is_safe(Method m) {
    return m == Method::Get || m == Method::Head || m == Method::Options || m == Method::Trace;
}

bool is_form(std::string_view content_type) {
    return http::iequals(http::byte_scan::trim_ows(content_type.substr(0, content_type.find(';'))),
                         "application/x-www-form-urlencoded");
}

class CsrfMiddleware final : public Middleware {
public:
    explicit CsrfMiddleware(CsrfOptions options) : options_(std::move(options)) {
        if (options_.field.empty()) throw std::invalid_argument("csrf: empty form field name");
        if (!http::is_token(options_.header))
            throw std::invalid_argument("csrf: invalid header name '" + options_.header + "'");
    }

    bool before(Request& req, Response&) override {
        if (is_safe(req.method())) return true;
        const std::optional<std::string> expected = session(req).get(detail::kCsrfSessionKey);
        std::optional<std::string> sent;
        if (req.has_header(options_.header))
            sent = std::string(req.header(options_.header));
        else if (is_form(req.header("Content-Type")))
            sent = app::form_value(req.body(), options_.field);
        if (!sent || sent->empty())
            throw HttpError(403, "CSRF token missing: send it in the form field '" +
                                     options_.field + "' or the header field '" + options_.header +
                                     "'");
        if (!expected)
            throw HttpError(403,
                            "CSRF token refused: the session has none (it expired or "
                            "never was): load the form again");
        if (!app::equal_in_constant_time(*sent, *expected))
            throw HttpError(403, "CSRF token does not match this session's");
        return true;
    }

private:
    CsrfOptions options_;
};

}  // namespace

std::shared_ptr<Middleware> csrf(CsrfOptions options) {
    return std::make_shared<CsrfMiddleware>(std::move(options));
}

}  // namespace rivet
