#include "app/static/http_date.hpp"

#include <ctime>

namespace rivet::files {

namespace {

// A cursor over the date text; each read fails (returns false) on anything unexpected.
struct Scanner {
    std::string_view s;
    size_t at = 0;

    bool literal(std::string_view what) {
        if (s.substr(at, what.size()) != what) return false;
        at += what.size();
        return true;
    }
    bool digits(size_t n, int& out) {
        if (at + n > s.size()) return false;
        out = 0;
        for (size_t i = 0; i < n; ++i) {
            char c = s[at + i];
            if (c < '0' || c > '9') return false;
            out = out * 10 + (c - '0');
        }
        at += n;
        return true;
    }
    bool month(int& out) {
        static constexpr std::string_view kMonths = "JanFebMarAprMayJunJulAugSepOctNovDec";
        if (at + 3 > s.size()) return false;
        size_t i = kMonths.find(s.substr(at, 3));
        if (i == std::string_view::npos || i % 3 != 0) return false;
        out = int(i / 3);
        at += 3;
        return true;
    }
    bool weekday(bool long_form) {
        static constexpr std::string_view kLong[] = {"Monday", "Tuesday",  "Wednesday", "Thursday",
                                                     "Friday", "Saturday", "Sunday"};
        for (auto day : kLong)
            if (literal(long_form ? day : day.substr(0, 3))) return true;
        return false;
    }
    bool time_of_day(int& h, int& m, int& sec) {
        return digits(2, h) && literal(":") && digits(2, m) && literal(":") && digits(2, sec);
    }
    bool done() const { return at == s.size(); }
};

// Days from 1970-01-01 to a proleptic Gregorian date (no time zone involved, unlike mktime).
int64_t days_from_civil(int64_t y, int m, int d) {
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

std::optional<int64_t> make(int year, int month0, int day, int h, int m, int s) {
    if (day < 1 || day > 31 || h > 23 || m > 59 || s > 60) return std::nullopt;  // 60: leap second
    return days_from_civil(year, month0 + 1, day) * 86400 + h * 3600 + m * 60 + s;
}

}  // namespace

std::optional<int64_t> parse_http_date(std::string_view text) {
    int day = 0, month = 0, year = 0, h = 0, m = 0, s = 0;
    {  // IMF-fixdate
        Scanner p{text};
        if (p.weekday(false) && p.literal(", ") && p.digits(2, day) && p.literal(" ") &&
            p.month(month) && p.literal(" ") && p.digits(4, year) && p.literal(" ") &&
            p.time_of_day(h, m, s) && p.literal(" GMT") && p.done())
            return make(year, month, day, h, m, s);
    }
    {  // RFC 850: a two-digit year more than 50 years ahead is in the past (RFC 9110 §5.6.7)
        Scanner p{text};
        if (p.weekday(true) && p.literal(", ") && p.digits(2, day) && p.literal("-") &&
            p.month(month) && p.literal("-") && p.digits(2, year) && p.literal(" ") &&
            p.time_of_day(h, m, s) && p.literal(" GMT") && p.done()) {
            time_t now = time(nullptr);
            tm g;
            gmtime_r(&now, &g);
            int this_year = g.tm_year + 1900;
            year += this_year / 100 * 100;
            if (year > this_year + 50) year -= 100;
            return make(year, month, day, h, m, s);
        }
    }
    {  // asctime: "Sun Nov  6 08:49:37 1994"
        Scanner p{text};
        if (p.weekday(false) && p.literal(" ") && p.month(month) && p.literal(" ")) {
            bool ok = p.literal(" ") ? p.digits(1, day) : p.digits(2, day);
            if (ok && p.literal(" ") && p.time_of_day(h, m, s) && p.literal(" ") &&
                p.digits(4, year) && p.done())
                return make(year, month, day, h, m, s);
        }
    }
    return std::nullopt;
}

}  // namespace rivet::files
