// rivet::csrf(): Cross-Site Request Forgery protection for pages with forms and cookies.
//
//   app.use(rivet::sessions({.secret = secret}));
//   app.use(rivet::csrf());                                 // after sessions()
//   ... in the handler of the page with a form:
//   "<input type=hidden name=_csrf value=" + rivet::session(req).csrf_token() + ">"
//
// Every POST, PUT, PATCH and DELETE must carry the session's token: in the form field `_csrf`
// of an application/x-www-form-urlencoded body, or in the field X-CSRF-Token (scripts). Else
// the middleware answers 403 naming the reason, before the handler runs. A request with a
// streamed body (Route::stream_body) must use the header field: its body is not read here.
// GET, HEAD, OPTIONS and TRACE pass: they must not change anything.
#pragma once

#include <memory>
#include <string>

#include <rivet/middleware.hpp>

namespace rivet {

struct CsrfOptions {
    std::string field = "_csrf";
    std::string header = "X-CSRF-Token";
};

// Throws std::invalid_argument for an empty field or a header that is not a field name.
std::shared_ptr<Middleware> csrf(CsrfOptions options = {});

}  // namespace rivet
