#include "engine/http2/allocator.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace rivet::engine {

namespace {

// A block's header: its size class, so that free() needs no size. 16 bytes keep the block as
// aligned as malloc's.
struct alignas(16) BlockHead {
    uint32_t size_class;
};
constexpr uint32_t kLarge = UINT32_MAX;    // from malloc, not from a list
constexpr size_t kClasses = 8;             // 32, 64, ... 4096 bytes
constexpr size_t kKeptBytes = 512 * 1024;  // per class and thread

constexpr size_t class_size(size_t c) {
    return size_t(32) << c;
}

struct FreeLists {
    struct Free {
        Free* next;
    };
    Free* head[kClasses] = {};
    size_t kept[kClasses] = {};

    ~FreeLists() {
        for (auto* h : head)
            while (h) {
                Free* next = h->next;
                std::free(reinterpret_cast<BlockHead*>(h) - 1);
                h = next;
            }
    }
};
thread_local FreeLists lists;

size_t size_class(size_t n) {
    size_t c = 0;
    while (c < kClasses && class_size(c) < n) ++c;
    return c;
}

void* allocate(size_t n, void*) {
    const size_t c = size_class(n);
    if (c == kClasses) {
        auto* b = static_cast<BlockHead*>(std::malloc(sizeof(BlockHead) + n));
        if (!b) return nullptr;
        b->size_class = kLarge;
        return b + 1;
    }
    if (FreeLists::Free* f = lists.head[c]) {
        lists.head[c] = f->next;
        lists.kept[c] -= class_size(c);
        return f;
    }
    auto* b = static_cast<BlockHead*>(std::malloc(sizeof(BlockHead) + class_size(c)));
    if (!b) return nullptr;
    b->size_class = uint32_t(c);
    return b + 1;
}

void release(void* p, void*) {
    if (!p) return;
    BlockHead* b = static_cast<BlockHead*>(p) - 1;
    const uint32_t c = b->size_class;
    if (c == kLarge || lists.kept[c] + class_size(c) > kKeptBytes) return std::free(b);
    auto* f = static_cast<FreeLists::Free*>(p);
    f->next = lists.head[c];
    lists.head[c] = f;
    lists.kept[c] += class_size(c);
}

void* allocate_zeroed(size_t count, size_t size, void* user) {
    if (size && count > SIZE_MAX / size) return nullptr;
    void* p = allocate(count * size, user);
    if (p) std::memset(p, 0, count * size);
    return p;
}

void* reallocate(void* p, size_t n, void* user) {
    if (!p) return allocate(n, user);
    if (n == 0) {
        release(p, user);
        return nullptr;
    }
    BlockHead* b = static_cast<BlockHead*>(p) - 1;
    if (b->size_class == kLarge) {
        auto* grown = static_cast<BlockHead*>(std::realloc(b, sizeof(BlockHead) + n));
        return grown ? grown + 1 : nullptr;
    }
    const size_t have = class_size(b->size_class);
    if (n <= have) return p;
    void* q = allocate(n, user);
    if (!q) return nullptr;
    std::memcpy(q, p, have);
    release(p, user);
    return q;
}

nghttp2_mem allocator_functions{nullptr, allocate, release, allocate_zeroed, reallocate};

}  // namespace

nghttp2_mem* http2_allocator() {
    return &allocator_functions;
}

}  // namespace rivet::engine
