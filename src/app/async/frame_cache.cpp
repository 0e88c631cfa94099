// rivet::detail::allocate_frame/free_frame: coroutine frames recycled per thread, by size class
// (64-byte steps up to 2 KiB; larger ones go to the heap). Each handler's frame has one size, so
// a loop soon reuses the same few blocks. A frame freed on another thread than the one that
// made it simply joins that thread's cache.
#include <rivet/task.hpp>

#include <array>
#include <cstdlib>
#include <new>

namespace rivet::detail {

// Under AddressSanitizer every frame goes to the heap, so that a use after free is caught.
#if defined(__SANITIZE_ADDRESS__)
void* allocate_frame(std::size_t size) {
    return ::operator new(size);
}
void free_frame(void* frame, std::size_t) noexcept {
    ::operator delete(frame);
}
#else
namespace {

constexpr std::size_t kStep = 64;
constexpr std::size_t kClasses = 32;   // up to 2 KiB
constexpr std::size_t kPerClass = 64;  // frames kept per class and thread

struct FreeFrame {
    FreeFrame* next;
};

struct FrameCache {
    std::array<FreeFrame*, kClasses> heads{};
    std::array<std::size_t, kClasses> counts{};
    ~FrameCache() {
        for (FreeFrame* f : heads)
            while (f) {
                FreeFrame* next = f->next;
                ::operator delete(f);
                f = next;
            }
    }
};

thread_local FrameCache t_cache;

std::size_t class_of(std::size_t size) {
    return (size + kStep - 1) / kStep - 1;
}

}  // namespace

void* allocate_frame(std::size_t size) {
    std::size_t c = class_of(size);
    if (c >= kClasses) return ::operator new(size);
    if (FreeFrame* f = t_cache.heads[c]) {
        t_cache.heads[c] = f->next;
        --t_cache.counts[c];
        return f;
    }
    return ::operator new((c + 1) * kStep);
}

void free_frame(void* frame, std::size_t size) noexcept {
    std::size_t c = class_of(size);
    if (c >= kClasses || t_cache.counts[c] >= kPerClass) return ::operator delete(frame);
    auto* f = static_cast<FreeFrame*>(frame);
    f->next = t_cache.heads[c];
    t_cache.heads[c] = f;
    ++t_cache.counts[c];
}
#endif

}  // namespace rivet::detail
