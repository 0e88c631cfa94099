// rivet::pg's values: query parameters (Params) and results (Result, Row, Value), in libpq's
// text format. Part of the optional rivet_pg library (rivet/pg.hpp); needs no libpq header.
//
//   auto rows = co_await db.query("select id, title, done from notes where owner = $1", user);
//   for (const rivet::pg::Row& row : rows) {
//       int64_t id = row.get<int64_t>(0);
//       std::string title = row["title"].as<std::string>();
//       std::optional<bool> done = row["done"].as<std::optional<bool>>();  // NULL -> nullopt
//   }
#pragma once

#include <charconv>
#include <concepts>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

struct pg_result;  // libpq's PGresult

namespace rivet::pg {

// A server's error (or a value that does not convert): what, the SQLSTATE code ("23505"; empty
// for errors of the client itself), the server's DETAIL. Not an HttpError: a handler that does
// not catch it answers 500 and the message stays in the error log, not in the client's answer.
class Error : public std::runtime_error {
public:
    explicit Error(const std::string& what, std::string sqlstate = {}, std::string detail = {})
        : std::runtime_error(what), sqlstate_(std::move(sqlstate)), detail_(std::move(detail)) {}
    const std::string& sqlstate() const noexcept { return sqlstate_; }
    const std::string& detail() const noexcept { return detail_; }

private:
    std::string sqlstate_;
    std::string detail_;
};

// 23505: an INSERT or UPDATE broke a unique constraint (a handler typically answers 409).
class UniqueViolation : public Error {
public:
    using Error::Error;
};

namespace detail {
template <class T>
struct IsOptional : std::false_type {};
template <class T>
struct IsOptional<std::optional<T>> : std::true_type {};
[[noreturn]] void throw_bad_value(std::string_view text, const char* type);
bool parse_bool(std::string_view text);  // PostgreSQL's "t"/"f" (and true/false, 1/0)
double parse_double(std::string_view text);
}  // namespace detail

// One field of one row. A view into its Result: keep the Result while using it.
class Value {
public:
    Value(const pg_result* result, int row, int column) : r_(result), row_(row), col_(column) {}

    bool is_null() const;
    std::string_view text() const;  // the text format; "" for NULL

    // std::string, std::string_view (into the Result), bool, any integer type (range checked),
    // float, double; std::optional<T> of them gives nullopt for NULL. A NULL read as a plain T,
    // or text that is not a T, throws pg::Error.
    template <class T>
    T as() const {
        if constexpr (detail::IsOptional<T>::value) {
            if (is_null()) return std::nullopt;
            return as<typename T::value_type>();
        } else {
            if (is_null()) detail::throw_bad_value("NULL", typeid_name<T>());
            std::string_view s = text();
            if constexpr (std::is_same_v<T, std::string>) {
                return std::string(s);
            } else if constexpr (std::is_same_v<T, std::string_view>) {
                return s;
            } else if constexpr (std::is_same_v<T, bool>) {
                return detail::parse_bool(s);
            } else if constexpr (std::is_integral_v<T>) {
                T v{};
                auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
                if (ec != std::errc() || end != s.data() + s.size())
                    detail::throw_bad_value(s, "an integer in range");
                return v;
            } else if constexpr (std::is_floating_point_v<T>) {
                return static_cast<T>(detail::parse_double(s));
            } else {
                static_assert(sizeof(T) == 0, "pg::Value::as: no conversion to this type");
            }
        }
    }

private:
    template <class T>
    static const char* typeid_name() {
        if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, std::string_view>)
            return "text (use std::optional for NULL)";
        else
            return "a value (use std::optional for NULL)";
    }
    const pg_result* r_;
    int row_;
    int col_;
};

class Row {
public:
    Row(const pg_result* result, int row) : r_(result), row_(row) {}
    int size() const;  // columns
    Value operator[](int column) const;
    Value operator[](std::string_view name) const;  // throws pg::Error for no such column
    template <class T>
    T get(int column) const {
        return (*this)[column].as<T>();
    }
    template <class T>
    T get(std::string_view name) const {
        return (*this)[name].as<T>();
    }

private:
    const pg_result* r_;
    int row_;
};

// A statement's result: its rows (none for a command), shared (copies are cheap).
class Result {
public:
    Result() = default;
    explicit Result(pg_result* owned);  // takes it (PQclear when the last copy goes)

    int size() const;  // rows
    bool empty() const { return size() == 0; }
    int columns() const;
    std::string_view column_name(int column) const;
    int64_t affected_rows() const;  // INSERT/UPDATE/DELETE/...: PQcmdTuples; 0 otherwise
    Row operator[](int row) const;  // unchecked as libpq: 0 <= row < size()
    Row at(int row) const;          // checked: pg::Error past the end

    class Iterator {
    public:
        Iterator(const pg_result* r, int row) : r_(r), row_(row) {}
        Row operator*() const { return Row(r_, row_); }
        Iterator& operator++() {
            ++row_;
            return *this;
        }
        bool operator==(const Iterator& o) const { return row_ == o.row_; }

    private:
        const pg_result* r_;
        int row_;
    };
    Iterator begin() const { return Iterator(get(), 0); }
    Iterator end() const { return Iterator(get(), size()); }

private:
    const pg_result* get() const { return r_.get(); }
    std::shared_ptr<pg_result> r_;
};

// A statement's parameters ($1, $2, ...) in text format; std::nullopt (or an empty optional)
// is SQL NULL. Made from the arguments of query(), execute() and Batch::add().
class Params {
public:
    template <class... A>
    static Params of(A&&... args) {
        Params p;
        p.values_.reserve(sizeof...(args));
        (p.add(std::forward<A>(args)), ...);
        return p;
    }

    void add(std::nullopt_t) { values_.emplace_back(std::nullopt); }
    void add(bool v) { values_.emplace_back(v ? "t" : "f"); }
    void add(const char* v) { values_.emplace_back(std::string(v)); }
    void add(std::string_view v) { values_.emplace_back(std::string(v)); }
    void add(std::string v) { values_.emplace_back(std::move(v)); }
    template <std::integral T>
    requires(!std::is_same_v<T, bool>) void add(T v) { values_.emplace_back(std::to_string(v)); }
    template <std::floating_point T>
    void add(T v) {
        char buf[64];
        auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);  // shortest round trip
        values_.emplace_back(std::string(buf, end));
    }
    template <class T>
    void add(const std::optional<T>& v) {
        if (v)
            add(*v);
        else
            add(std::nullopt);
    }

    const std::vector<std::optional<std::string>>& values() const { return values_; }

private:
    std::vector<std::optional<std::string>> values_;
};

}  // namespace rivet::pg
