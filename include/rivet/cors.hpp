// rivet::cors(): Cross-Origin Resource Sharing for browsers calling the API from other origins.
//
//   app.use(rivet::cors({.allow_origins = {"https://app.example"}, .allow_credentials = true}));
//
// A preflight (OPTIONS with Origin and Access-Control-Request-Method) is answered 204 by the
// middleware itself, before routing. Every other response to an allowed origin carries
// Access-Control-Allow-Origin, error responses included (404, 405, 413, 429, 500, 503 ...): a
// browser then shows the status instead of a CORS failure.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <rivet/middleware.hpp>

namespace rivet {

struct CorsOptions {
    // Origins allowed, compared exactly ("https://app.example"); "*" allows any.
    std::vector<std::string> allow_origins = {"*"};
    std::vector<std::string> allow_methods = {"GET",   "HEAD",   "POST",   "PUT",
                                              "PATCH", "DELETE", "OPTIONS"};
    // Request fields a preflight may ask for; empty: whatever it asks (echoed back).
    std::vector<std::string> allow_headers{};
    // Response fields scripts may read beyond the safelisted ones (e.g. "X-Request-Id").
    std::vector<std::string> expose_headers{};
    // Cookies and Authorization in cross-origin requests. With "*", the origin is echoed
    // instead (browsers refuse "*" with credentials).
    bool allow_credentials = false;
    unsigned max_age_s = 600;  // how long a browser may cache a preflight's answer
};

// Throws std::invalid_argument on an origin or field name holding CR, LF or a comma.
std::shared_ptr<Middleware> cors(CorsOptions options = {});

}  // namespace rivet
