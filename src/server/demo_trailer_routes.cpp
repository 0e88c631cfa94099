// GET /trailers: a streamed body whose SHA-256 follows it as a trailer field, computed as the
// pieces leave (what a trailer is for: a value known only once the body has been sent).
#include <openssl/evp.h>

#include <memory>
#include <string>

#include "server/demo_routes.hpp"
#include "server/number_input.hpp"

namespace rivet::server {

namespace {

constexpr uint64_t kDefaultPieces = 4;
constexpr uint64_t kMaxPieces = 10'000;

// The running digest of what was streamed so far.
class Sha256 {
public:
    // A context that cannot be made or started (no memory, or OpenSSL not loaded: see
    // openssl_on_use.cpp) is dropped, and the trailer says "unavailable".
    Sha256() : ctx_(EVP_MD_CTX_new()) {
        if (ctx_ && EVP_DigestInit_ex(ctx_.get(), EVP_sha256(), nullptr) != 1) ctx_.reset();
    }
    void add(std::string_view bytes) {
        if (ctx_ && EVP_DigestUpdate(ctx_.get(), bytes.data(), bytes.size()) != 1) ctx_.reset();
    }
    std::string hex() {
        unsigned char digest[EVP_MAX_MD_SIZE];
        unsigned int len = 0;
        if (!ctx_ || EVP_DigestFinal_ex(ctx_.get(), digest, &len) != 1) return "unavailable";
        static const char kHex[] = "0123456789abcdef";
        std::string out;
        for (unsigned int i = 0; i < len; ++i) {
            out.push_back(kHex[digest[i] >> 4]);
            out.push_back(kHex[digest[i] & 15]);
        }
        return out;
    }

private:
    struct Free {
        void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
    };
    std::unique_ptr<EVP_MD_CTX, Free> ctx_;
};

// ?pieces=N (default 4): N lines, each its own chunk, then "checksum: <sha256 hex of the body>"
// in the last chunk (HTTP/1.1; an HTTP/1.0 client gets the body alone).
void trailers_handler(Request& req, Response& res) {
    uint64_t pieces = kDefaultPieces;
    if (auto n = req.query("pieces")) {
        auto parsed = parse_count(*n, kMaxPieces, "pieces");
        if (!parsed.value) {
            res.status(400).json({{"error", parsed.error}});
            return;
        }
        pieces = *parsed.value;
    }
    struct State {
        uint64_t sent = 0;
        uint64_t total;
        Sha256 sum;
        Trailers trailers;
    };
    auto state = std::make_shared<State>();
    state->total = pieces;
    state->trailers = res.trailers();
    res.stream(
        [state](std::string& out) {
            if (state->sent < state->total) {
                std::string line = "piece " + std::to_string(++state->sent) + " of " +
                                   std::to_string(state->total) + "\n";
                state->sum.add(line);
                out.append(line);
                return true;
            }
            state->trailers.add("checksum", state->sum.hex());  // read once this says done
            return false;
        },
        "text/plain; charset=utf-8");
}

}  // namespace

void add_trailer_routes(App& app) {
    app.get("/trailers", trailers_handler);
}

}  // namespace rivet::server
