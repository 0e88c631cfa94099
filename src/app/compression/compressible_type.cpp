#include "app/compression/compressible_type.hpp"

#include "http/byte_scan.hpp"
#include "http/request_parser.hpp"

namespace rivet::app {

namespace {

bool ends_with_nocase(std::string_view s, std::string_view suffix) {
    return s.size() >= suffix.size() && http::iequals(s.substr(s.size() - suffix.size()), suffix);
}

bool matches(std::string_view type, std::string_view subtype, std::string_view pattern) {
    size_t slash = pattern.find('/');
    std::string_view ptype = pattern.substr(0, slash), psub = pattern.substr(slash + 1);
    if (!http::iequals(type, ptype)) return false;
    if (psub == "*") return true;
    if (psub.size() > 2 && psub[0] == '*' && psub[1] == '+')
        return subtype.size() > psub.size() - 1 && ends_with_nocase(subtype, psub.substr(1));
    return http::iequals(subtype, psub);
}

}  // namespace

bool valid_type_pattern(std::string_view pattern) {
    size_t slash = pattern.find('/');
    if (slash == 0 || slash == std::string_view::npos || slash + 1 == pattern.size()) return false;
    std::string_view sub = pattern.substr(slash + 1);
    if (pattern.substr(0, slash).find('*') != std::string_view::npos) return false;
    if (sub == "*") return true;
    if (sub.starts_with("*+")) return sub.size() > 2 && sub.find('*', 1) == std::string_view::npos;
    return sub.find('*') == std::string_view::npos;
}

bool compressible_type(std::string_view content_type, const std::vector<std::string>& patterns) {
    std::string_view media =
        http::byte_scan::trim_ows(content_type.substr(0, content_type.find(';')));
    size_t slash = media.find('/');
    if (slash == std::string_view::npos || slash == 0 || slash + 1 == media.size()) return false;
    std::string_view type = media.substr(0, slash), subtype = media.substr(slash + 1);
    // Server-Sent Events are read as they come: a compressor's buffer would hold them back
    // (the framework's event streams are streamed bodies, never compressed anyway).
    if (http::iequals(type, "text") && http::iequals(subtype, "event-stream")) return false;
    for (const std::string& p : patterns)
        if (matches(type, subtype, p)) return true;
    return false;
}

namespace {

// The address (under 2^47 in a user-space x86-64 or AArch64 process) and the size (a media type
// is far under 2^16 bytes) in one word; 0 when they do not fit, which is never remembered.
uint64_t literal_key(std::string_view type) {
    const auto address = reinterpret_cast<uintptr_t>(type.data());
    if (address == 0 || address >= (uint64_t(1) << 47) || type.size() >= (size_t(1) << 16))
        return 0;
    return (uint64_t(type.size()) << 47) | address;
}

}  // namespace

bool CompressibleTypes::operator()(std::string_view type, bool literal) const {
    const uint64_t key = literal ? literal_key(type) : 0;
    if (key == 0) return compressible_type(type, patterns_);
    const size_t home = size_t((key * 0x9e3779b97f4a7c15ull) >> (64 - kSlotBits));
    for (size_t probe = 0; probe < kProbes; ++probe) {
        std::atomic<uint64_t>& slot = verdicts_[(home + probe) % kSlots];
        uint64_t seen = slot.load(std::memory_order_relaxed);
        if (seen == 0) {
            const bool verdict = compressible_type(type, patterns_);
            // Another thread may take the slot first, for this type or another: either way
            // the verdict stands, and the next call finds one of them.
            slot.compare_exchange_strong(seen, (key << 1) | uint64_t(verdict),
                                         std::memory_order_relaxed);
            return verdict;
        }
        if ((seen >> 1) == key) return (seen & 1) != 0;
    }
    return compressible_type(type, patterns_);
}

size_t CompressibleTypes::remembered() const {
    size_t n = 0;
    for (const auto& slot : verdicts_) n += slot.load(std::memory_order_relaxed) != 0;
    return n;
}

}  // namespace rivet::app
