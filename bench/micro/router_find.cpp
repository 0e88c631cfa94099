// What Router::find costs per lookup on a small API's route table (static, parameter, wildcard
// and a miss), and how many heap allocations it makes (counted by replacing operator new: it
// must stay 0). "int" and "regex" look up a typed route (":id<int>") and an expression; a router
// from before constraints has plain parameters there. bench/micro/run.sh runs it before/after.
// Arguments, for counting instructions (perf stat) on a busy machine: [rounds [case]].
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "app/routing/router.hpp"

namespace {
size_t g_allocations = 0;
}

void* operator new(size_t n) {
    ++g_allocations;
    if (void* p = std::malloc(n ? n : 1)) return p;
    throw std::bad_alloc();
}
void operator delete(void* p) noexcept {
    std::free(p);
}
void operator delete(void* p, size_t) noexcept {
    std::free(p);
}

int main(int argc, char** argv) {
    using rivet::http::Method;
    rivet::app::Router router;
    const char* routes[] = {"/",
                            "/health",
                            "/api/v1/users",
                            "/api/v1/users/:id",
                            "/api/v1/users/:id/posts/:post",
                            "/api/v1/orders",
                            "/api/v1/orders/:id",
                            "/static/*path",
                            "/api/v2/search"};
    rivet::app::RouteId id = 0;
    for (const char* r : routes) router.add(Method::Get, r, id++);
    const rivet::app::RouteId typed = id;
    try {
        router.add(Method::Get, "/api/v1/items/:id<int>", id++);
        router.add(Method::Get, "/api/v1/skus/:sku([A-Z]{3}-[0-9]+)", id++);
    } catch (const std::invalid_argument&) {
        // A router from before constraints: the same tree with plain parameters, so that the
        // other cases compare like with like and these two show what a constraint adds.
        id = typed;
        router.add(Method::Get, "/api/v1/items/:id", id++);
        router.add(Method::Get, "/api/v1/skus/:sku", id++);
    }

    const int rounds = argc > 1 ? std::atoi(argv[1]) : 2'000'000;
    const std::string only = argc > 2 ? argv[2] : "";
    size_t sink = 0;
    auto time = [&](const char* label, const char* path) {
        if (!only.empty() && only != label) return;
        const size_t before = g_allocations;
        auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < rounds; ++i) {
            asm volatile("" : : "g"(path) : "memory");
            auto m = router.find(Method::Get, path);
            sink += m.route + m.params.size;
        }
        auto t1 = std::chrono::steady_clock::now();
        const double ns = std::chrono::duration<double, std::nano>(t1 - t0).count() / rounds;
        std::printf("%s %.1f ns (%.1f allocs)  ", label, ns,
                    double(g_allocations - before) / rounds);
    };
    time("static", "/api/v1/orders");
    time("param", "/api/v1/users/42/posts/7");
    time("wild", "/static/css/site.css");
    time("miss", "/api/v1/nothing/here");
    time("int", "/api/v1/items/42");
    time("regex", "/api/v1/skus/ABC-123");
    std::printf("(sink %zu)\n", sink);
    return 0;
}
