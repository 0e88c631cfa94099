#include "app/middleware/middleware_chain.hpp"

#include <stdexcept>

namespace rivet::app {

bool MiddlewareChain::covers(std::string_view prefix, std::string_view path) {
    // "/todos" covers "/todos" and "/todos/1", not "/todosx"; "/" (stored as "") covers all.
    return path.starts_with(prefix) && (path.size() == prefix.size() || path[prefix.size()] == '/');
}

void MiddlewareChain::add(std::string_view prefix, std::shared_ptr<Middleware> middleware) {
    if (!middleware) throw std::invalid_argument("null middleware");
    if (!prefix.empty() && prefix.front() != '/')
        throw std::invalid_argument("a middleware prefix must start with '/': " +
                                    std::string(prefix));
    while (!prefix.empty() && prefix.back() == '/') prefix.remove_suffix(1);
    // The most any path can see: every global one and every group (an upper bound, cheap).
    if (global_.size() + groups_.size() + 1 > kMaxPerRequest)
        throw std::invalid_argument("more than " + std::to_string(kMaxPerRequest) + " middleware");
    const bool waits = middleware->waits();
    if (prefix.empty()) {
        global_waits_ = global_waits_ || waits;
        global_.push_back(std::move(middleware));
    } else {
        groups_.push_back({std::string(prefix), std::move(middleware), waits});
    }
}

void MiddlewareChain::select(std::string_view path, Slice& slice) const {
    slice.size = 0;
    slice.ran = 0;
    slice.waits = global_waits_;
    for (const auto& m : global_) slice.items[slice.size++] = m.get();
    for (const auto& g : groups_) {
        if (!covers(g.prefix, path)) continue;
        slice.items[slice.size++] = g.middleware.get();
        slice.waits = slice.waits || g.waits;
    }
}

bool MiddlewareChain::run_before(Slice& slice, Request& req, Response& res) {
    while (slice.ran < slice.size) {
        Middleware* m = slice.items[slice.ran++];
        if (!m->before(req, res)) return false;
    }
    return true;
}

void MiddlewareChain::run_refused(const Slice& slice, Request& req) {
    for (uint8_t i = 0; i < slice.size; ++i) {
        try {
            slice.items[i]->refused(req);
        } catch (...) {  // the request is answered with its refusal all the same
        }
    }
}

}  // namespace rivet::app
