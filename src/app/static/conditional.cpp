#include "app/static/conditional.hpp"

#include "app/static/http_date.hpp"

namespace rivet::files {

namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

bool is_weak(std::string_view tag) {
    return tag.size() >= 2 && tag[0] == 'W' && tag[1] == '/';
}

std::string_view opaque(std::string_view tag) {
    return is_weak(tag) ? tag.substr(2) : tag;
}

}  // namespace

bool etag_list_matches(std::string_view list, std::string_view etag, bool weak_comparison) {
    list = trim(list);
    if (list == "*") return true;  // any current representation
    // An entity tag may hold commas (etagc is any visible byte but DQUOTE), so the list is
    // walked quoted string by quoted string rather than split on commas.
    size_t i = 0;
    while (i < list.size()) {
        while (i < list.size() && (list[i] == ' ' || list[i] == '\t' || list[i] == ',')) ++i;
        if (i >= list.size()) break;
        size_t start = i;
        if (list.compare(i, 2, "W/") == 0) i += 2;
        if (i >= list.size() || list[i] != '"') return false;  // malformed: no match
        size_t close = list.find('"', i + 1);
        if (close == std::string_view::npos) return false;
        std::string_view tag = list.substr(start, close + 1 - start);
        i = close + 1;
        if (weak_comparison) {
            if (opaque(tag) == opaque(etag)) return true;
        } else if (!is_weak(tag) && !is_weak(etag) && tag == etag) {
            return true;
        }
    }
    return false;
}

Precondition evaluate(const Conditions& c, const Validators& v, bool get_or_head, int64_t now) {
    if (!c.if_match.empty()) {
        if (!etag_list_matches(c.if_match, v.etag, false)) return Precondition::Failed;
    } else if (!c.if_unmodified_since.empty()) {
        auto date = parse_http_date(trim(c.if_unmodified_since));
        if (date && v.last_modified > *date) return Precondition::Failed;
    }
    if (!c.if_none_match.empty()) {
        if (etag_list_matches(c.if_none_match, v.etag, true))
            return get_or_head ? Precondition::NotModified : Precondition::Failed;
    } else if (!c.if_modified_since.empty() && get_or_head) {
        auto date = parse_http_date(trim(c.if_modified_since));
        if (date && *date <= now && v.last_modified <= *date) return Precondition::NotModified;
    }
    return Precondition::Proceed;
}

bool if_range_holds(std::string_view if_range, const Validators& v) {
    if_range = trim(if_range);
    if (if_range.empty()) return true;
    if (if_range.front() == '"' || is_weak(if_range))  // an entity tag: strong comparison only
        return !is_weak(if_range) && if_range == v.etag;
    auto date = parse_http_date(if_range);
    return date && *date == v.last_modified;
}

}  // namespace rivet::files
