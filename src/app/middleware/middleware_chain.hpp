// MiddlewareChain: the app's middleware in the order they run, and the slice of it that applies
// to one request (app-wide ones, then the groups whose prefix covers the path).
#pragma once

#include <rivet/middleware.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace rivet::app {

class MiddlewareChain {
public:
    // More than this many middleware for one path is refused when added: the slice for a request
    // lives in a fixed array, so selecting it allocates nothing.
    static constexpr size_t kMaxPerRequest = 32;

    // The middleware of one request, and how far before() got: after() runs for those.
    struct Slice {
        Middleware* items[kMaxPerRequest];
        uint8_t size = 0;
        uint8_t ran = 0;  // before() was called on items[0 .. ran)
        // Some item waits (Middleware::waits): the request runs as a coroutine (app_waiting.cpp).
        bool waits = false;
    };

    // `prefix` empty: every request. Throws std::invalid_argument on a prefix that does not start
    // with '/', or when a path could see more than kMaxPerRequest middleware.
    void add(std::string_view prefix, std::shared_ptr<Middleware> middleware);
    bool empty() const { return global_.empty() && groups_.empty(); }

    void select(std::string_view path, Slice& slice) const;

    // before() in order until one answers (returns false: `res` is the answer). Exceptions pass
    // through; slice.ran counts the one that threw. after() runs for items[ran-1] down to
    // items[0] (the caller does it, one at a time, so that one that throws stops no other).
    static bool run_before(Slice& slice, Request& req, Response& res);

    // refused() of every item, for a request refused before routing; one that throws stops no
    // other, and changes nothing of the refusal.
    static void run_refused(const Slice& slice, Request& req);

private:
    static bool covers(std::string_view prefix, std::string_view path);

    struct Group {
        std::string prefix;  // without a trailing '/'
        std::shared_ptr<Middleware> middleware;
        bool waits = false;
    };
    std::vector<std::shared_ptr<Middleware>> global_;
    bool global_waits_ = false;
    std::vector<Group> groups_;
};

}  // namespace rivet::app
