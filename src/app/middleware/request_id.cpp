#include <rivet/request_id.hpp>

#include <cstdint>
#include <random>
#include <stdexcept>
#include <string_view>

#include "http/request_parser.hpp"

namespace rivet {

namespace {

bool well_formed(std::string_view id) {
    if (id.empty() || id.size() > 128) return false;
    for (unsigned char c : id) {
        bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                  c == '.' || c == '_' || c == ':' || c == '-';
        if (!ok) return false;
    }
    return true;
}

// 16 hex digits of a per-thread random prefix (so ids from two threads or two runs differ), a
// '-', then the thread's counter in hex: unique without a lock, and cheap.
std::string next_id() {
    struct Source {
        char prefix[17];
        uint64_t counter = 0;
        Source() {
            std::random_device random;
            uint64_t bits = (uint64_t(random()) << 32) ^ random();
            for (int i = 15; i >= 0; --i, bits >>= 4) prefix[i] = "0123456789abcdef"[bits & 15];
            prefix[16] = '-';
        }
    };
    thread_local Source source;
    char out[17 + 16];
    std::copy(source.prefix, source.prefix + 17, out);
    char* end = out + 17;
    uint64_t n = ++source.counter;
    char digits[16];
    int count = 0;
    do {
        digits[count++] = "0123456789abcdef"[n & 15];
        n >>= 4;
    } while (n != 0);
    while (count > 0) *end++ = digits[--count];
    return std::string(out, end);
}

class RequestIdMiddleware final : public Middleware {
public:
    explicit RequestIdMiddleware(RequestIdOptions options) : options_(std::move(options)) {
        if (!http::is_token(options_.header))
            throw std::invalid_argument("request_id: invalid header name '" + options_.header +
                                        "'");
    }

    bool before(Request& req, Response&) override {
        id_of(req);
        return true;
    }

    void refused(Request& req) override { id_of(req); }  // the error body may carry it too

    void after(const Request& req, Response& res) override {
        if (res.header(options_.header).empty()) res.header(options_.header, id_of(req));
    }

private:
    // The request's id: set by before(), or made now for a request refused before routing.
    const std::string& id_of(const Request& req) const {
        if (const RequestId* known = req.context().find<RequestId>()) return known->value;
        std::string_view incoming = options_.trust_incoming ? req.header(options_.header) : "";
        return req.context()
            .set(RequestId{well_formed(incoming) ? std::string(incoming) : next_id()})
            .value;
    }

    RequestIdOptions options_;
};

}  // namespace

std::shared_ptr<Middleware> request_id(RequestIdOptions options) {
    return std::make_shared<RequestIdMiddleware>(std::move(options));
}

}  // namespace rivet
