// Results in libpq's text format, and the conversions that need more than a header.
#include <libpq-fe.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include <rivet/pg_result.hpp>

namespace rivet::pg {

namespace detail {

void throw_bad_value(std::string_view text, const char* type) {
    constexpr size_t kShown = 40;  // a long text is cut in the message
    std::string shown(text.substr(0, kShown));
    if (text.size() > kShown) shown += "...";
    throw Error("pg::Value: \"" + shown + "\" is not " + type);
}

bool parse_bool(std::string_view text) {
    if (text == "t" || text == "true" || text == "1") return true;
    if (text == "f" || text == "false" || text == "0") return false;
    throw_bad_value(text, "a boolean");
}

double parse_double(std::string_view text) {
    if (text == "NaN") return std::nan("");
    if (text == "Infinity") return HUGE_VAL;
    if (text == "-Infinity") return -HUGE_VAL;
    std::string s(text);  // strtod needs the terminating NUL
    char* end = nullptr;
    errno = 0;
    double v = std::strtod(s.c_str(), &end);
    if (s.empty() || end != s.c_str() + s.size() || errno == ERANGE)
        throw_bad_value(text, "a floating-point number");
    return v;
}

}  // namespace detail

bool Value::is_null() const {
    return PQgetisnull(r_, row_, col_) != 0;
}

std::string_view Value::text() const {
    return std::string_view(PQgetvalue(r_, row_, col_),
                            static_cast<size_t>(PQgetlength(r_, row_, col_)));
}

int Row::size() const {
    return PQnfields(r_);
}

Value Row::operator[](int column) const {
    if (column < 0 || column >= PQnfields(r_))
        throw Error("pg::Row: no column " + std::to_string(column));
    return Value(r_, row_, column);
}

Value Row::operator[](std::string_view name) const {
    // PQfnumber folds unquoted names to lower case as SQL would: quote to match exactly.
    std::string quoted;
    quoted.reserve(name.size() + 2);
    quoted.append(1, '"').append(name).append(1, '"');
    int column = PQfnumber(r_, quoted.c_str());
    if (column < 0) throw Error("pg::Row: no column named " + std::string(name));
    return Value(r_, row_, column);
}

Result::Result(pg_result* owned) {
    if (owned) r_.reset(owned, [](pg_result* r) { PQclear(r); });
}

int Result::size() const {
    return r_ ? PQntuples(r_.get()) : 0;
}

int Result::columns() const {
    return r_ ? PQnfields(r_.get()) : 0;
}

std::string_view Result::column_name(int column) const {
    const char* name = r_ ? PQfname(r_.get(), column) : nullptr;
    return name ? std::string_view(name) : std::string_view();
}

int64_t Result::affected_rows() const {
    const char* n = r_ ? PQcmdTuples(r_.get()) : "";
    return *n ? std::strtoll(n, nullptr, 10) : 0;
}

Row Result::operator[](int row) const {
    return Row(r_.get(), row);
}

Row Result::at(int row) const {
    if (row < 0 || row >= size()) throw Error("pg::Result: no row " + std::to_string(row));
    return Row(r_.get(), row);
}

}  // namespace rivet::pg
