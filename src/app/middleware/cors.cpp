#include <rivet/cors.hpp>

#include <stdexcept>
#include <string_view>

namespace rivet {

namespace {

std::string joined(const std::vector<std::string>& items, std::string_view what) {
    std::string out;
    for (const auto& item : items) {
        if (item.empty() || item.find_first_of("\r\n\0,", 0, 4) != std::string::npos)
            throw std::invalid_argument("cors: invalid " + std::string(what) + ": '" + item + "'");
        if (!out.empty()) out += ", ";
        out += item;
    }
    return out;
}

class Cors final : public Middleware {
public:
    explicit Cors(CorsOptions options)
        : options_(std::move(options)),
          methods_(joined(options_.allow_methods, "method")),
          headers_(joined(options_.allow_headers, "header name")),
          expose_(joined(options_.expose_headers, "header name")),
          max_age_(std::to_string(options_.max_age_s)) {
        joined(options_.allow_origins, "origin");  // validates them
        for (const auto& o : options_.allow_origins) any_origin_ |= o == "*";
        // The answer depends on the Origin sent unless it is always "*": caches must know.
        varies_ = !any_origin_ || options_.allow_credentials;
    }

    bool before(Request& req, Response& res) override {
        if (req.method() != Method::Options) return true;
        std::string_view origin = req.header("Origin");
        if (origin.empty() || !req.has_header("Access-Control-Request-Method"))
            return true;  // a plain OPTIONS: routing answers it with Allow
        res.status(204);
        std::string_view allow = allowed(origin);
        if (allow.empty()) return false;  // not an allowed origin: no fields, the browser refuses
        add_origin(res, allow);
        res.header("Access-Control-Allow-Methods", methods_);
        std::string_view asked = req.header("Access-Control-Request-Headers");
        if (!headers_.empty())
            res.header("Access-Control-Allow-Headers", headers_);
        else if (!asked.empty())
            res.header("Access-Control-Allow-Headers", asked);
        res.header("Access-Control-Max-Age", max_age_);
        return false;
    }

    void after(const Request& req, Response& res) override {
        if (!res.header("Access-Control-Allow-Origin").empty()) return;  // a preflight's answer
        std::string_view allow = allowed(req.header("Origin"));
        if (allow.empty()) {
            if (varies_) res.header("Vary", "Origin");
            return;
        }
        add_origin(res, allow);
        if (!expose_.empty()) res.header("Access-Control-Expose-Headers", expose_);
    }

private:
    // The Access-Control-Allow-Origin value for `origin`; empty when it is not allowed.
    std::string_view allowed(std::string_view origin) const {
        if (origin.empty()) return {};
        if (any_origin_) return options_.allow_credentials ? origin : std::string_view("*");
        for (const auto& o : options_.allow_origins)
            if (o == origin) return origin;
        return {};
    }

    void add_origin(Response& res, std::string_view allow) const {
        res.header("Access-Control-Allow-Origin", allow);
        if (varies_) res.header("Vary", "Origin");
        if (options_.allow_credentials) res.header("Access-Control-Allow-Credentials", "true");
    }

    CorsOptions options_;
    std::string methods_, headers_, expose_, max_age_;
    bool any_origin_ = false;
    bool varies_ = true;
};

}  // namespace

std::shared_ptr<Middleware> cors(CorsOptions options) {
    return std::make_shared<Cors>(std::move(options));
}

}  // namespace rivet
