#include "app/static/byte_ranges.hpp"

#include <algorithm>
#include <charconv>

namespace rivet::files {

namespace {

// A gap smaller than this costs more as a separate part (boundary, Content-Type and
// Content-Range lines) than sent along: merge across it.
constexpr uint64_t kMergeGap = 80;

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

bool parse_number(std::string_view s, uint64_t& out) {
    if (s.empty()) return false;
    for (char c : s)
        if (c < '0' || c > '9') return false;
    auto r = std::from_chars(s.data(), s.data() + s.size(), out);
    if (r.ec == std::errc::result_out_of_range) {
        out = UINT64_MAX;  // a huge position is still a valid one: past any end
        return true;
    }
    return r.ec == std::errc();
}

bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if ((a[i] | 0x20) != (b[i] | 0x20)) return false;
    return true;
}

// Merges when any two ranges overlap or nearly touch; keeps the asked order otherwise.
void coalesce(std::vector<ByteRange>& ranges) {
    if (ranges.size() < 2) return;
    std::vector<ByteRange> sorted = ranges;
    std::sort(sorted.begin(), sorted.end(),
              [](const ByteRange& a, const ByteRange& b) { return a.first < b.first; });
    bool merge = false;
    for (size_t i = 1; i < sorted.size() && !merge; ++i)
        merge = sorted[i].first <= sorted[i - 1].last ||
                sorted[i].first - sorted[i - 1].last <= kMergeGap;
    if (!merge) return;
    ranges.clear();
    for (const auto& r : sorted) {
        if (!ranges.empty() &&
            (r.first <= ranges.back().last || r.first - ranges.back().last <= kMergeGap))
            ranges.back().last = std::max(ranges.back().last, r.last);
        else
            ranges.push_back(r);
    }
}

}  // namespace

RangeRequest parse_ranges(std::string_view header, uint64_t size, unsigned max_ranges) {
    RangeRequest out;
    size_t eq = header.find('=');
    if (eq == std::string_view::npos || !iequals(trim(header.substr(0, eq)), "bytes")) return out;
    std::string_view list = header.substr(eq + 1);
    bool any = false;
    for (size_t pos = 0; pos <= list.size();) {
        size_t comma = std::min(list.find(',', pos), list.size());
        std::string_view spec = trim(list.substr(pos, comma - pos));
        pos = comma + 1;
        if (spec.empty()) continue;  // list syntax allows empty elements ("0-1, ,2-3")
        any = true;
        size_t dash = spec.find('-');
        if (dash == std::string_view::npos) return {};
        std::string_view a = spec.substr(0, dash), b = spec.substr(dash + 1);
        uint64_t first = 0, last = 0;
        if (a.empty()) {  // suffix: the last b bytes
            if (!parse_number(b, last)) return {};
            if (last == 0 || size == 0) continue;  // unsatisfiable
            out.ranges.push_back({size - std::min(last, size), size - 1});
            continue;
        }
        if (!parse_number(a, first)) return {};
        if (b.empty()) {
            last = UINT64_MAX;
        } else if (!parse_number(b, last) || last < first) {
            return {};  // invalid: the whole field is ignored
        }
        if (first >= size) continue;  // unsatisfiable
        out.ranges.push_back({first, std::min(last, size - 1)});
    }
    if (!any) return {};
    if (out.ranges.empty()) {
        out.kind = RangeRequest::Kind::Unsatisfiable;
        return out;
    }
    coalesce(out.ranges);
    if (out.ranges.size() > max_ranges) return {};
    out.kind = RangeRequest::Kind::Partial;
    return out;
}

}  // namespace rivet::files
