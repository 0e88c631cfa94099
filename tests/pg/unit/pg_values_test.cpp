// rivet::pg's values without a server: parameters as libpq gets them, and typed reads of a
// result built with libpq's own PQmakeEmptyPGresult/PQsetvalue.
#include <gtest/gtest.h>
#include <libpq-fe.h>

#include <rivet/pg.hpp>

#include <cmath>
#include <limits>

namespace pg = rivet::pg;

namespace {

// One row; nullptr is NULL.
pg::Result one_row(std::vector<std::string> names, std::vector<const char*> values) {
    PGresult* r = PQmakeEmptyPGresult(nullptr, PGRES_TUPLES_OK);
    std::vector<PGresAttDesc> attrs(names.size());
    for (size_t i = 0; i < names.size(); ++i) {
        attrs[i] = PGresAttDesc{};
        attrs[i].name = names[i].data();
        attrs[i].format = 0;
    }
    EXPECT_TRUE(PQsetResultAttrs(r, int(attrs.size()), attrs.data()));
    for (size_t i = 0; i < values.size(); ++i)
        EXPECT_TRUE(PQsetvalue(r, 0, int(i), const_cast<char*>(values[i]),
                               values[i] ? int(strlen(values[i])) : -1));
    return pg::Result(r);
}

}  // namespace

TEST(PgParams, TextFormatAndNull) {
    std::optional<int> none, seven = 7;
    std::string s = "str";
    auto p = pg::Params::of(int64_t{-42}, "lit", s, std::string_view("view"), true, false, 0.1,
                            std::nullopt, none, seven, uint16_t{65535});
    const auto& v = p.values();
    ASSERT_EQ(v.size(), 11u);
    EXPECT_EQ(*v[0], "-42");
    EXPECT_EQ(*v[1], "lit");
    EXPECT_EQ(*v[2], "str");
    EXPECT_EQ(*v[3], "view");
    EXPECT_EQ(*v[4], "t");
    EXPECT_EQ(*v[5], "f");
    EXPECT_EQ(*v[6], "0.1");  // the shortest text that reads back as the same double
    EXPECT_FALSE(v[7]);
    EXPECT_FALSE(v[8]);
    EXPECT_EQ(*v[9], "7");
    EXPECT_EQ(*v[10], "65535");
}

TEST(PgResult, TypedReadsByIndexAndName) {
    auto r = one_row({"id", "Title", "done", "ratio", "missing"},
                     {"9007199254740993", "héllo", "t", "-1.5e-3", nullptr});
    ASSERT_EQ(r.size(), 1);
    EXPECT_EQ(r.columns(), 5);
    EXPECT_EQ(r.column_name(1), "Title");
    pg::Row row = r[0];
    EXPECT_EQ(row.get<int64_t>(0), 9007199254740993);
    EXPECT_EQ(row["Title"].as<std::string>(), "héllo");  // names match exactly (no folding)
    EXPECT_TRUE(row.get<bool>("done"));
    EXPECT_DOUBLE_EQ(row.get<double>(3), -1.5e-3);
    EXPECT_TRUE(row["missing"].is_null());
    EXPECT_EQ(row["missing"].as<std::optional<int>>(), std::nullopt);
    EXPECT_EQ(row["id"].as<std::optional<int64_t>>(), 9007199254740993);
    int rows = 0;
    for (pg::Row each : r) rows += each.size() == 5;
    EXPECT_EQ(rows, 1);
}

TEST(PgResult, BadReadsThrowPgError) {
    auto r = one_row({"big", "word", "nothing", "f"}, {"300", "abc", nullptr, "NaN"});
    pg::Row row = r[0];
    EXPECT_THROW(row.get<int8_t>(0), pg::Error);  // out of range
    EXPECT_EQ(row.get<int16_t>(0), 300);
    EXPECT_THROW(row.get<int>(1), pg::Error);
    EXPECT_THROW(row.get<bool>(1), pg::Error);
    EXPECT_THROW(row.get<double>(1), pg::Error);
    EXPECT_THROW(row.get<std::string>(2), pg::Error);  // NULL as a plain T
    EXPECT_THROW(row["nope"], pg::Error);
    EXPECT_THROW(row[7], pg::Error);
    EXPECT_THROW(r.at(1), pg::Error);
    EXPECT_TRUE(std::isnan(row.get<double>(3)));
}

TEST(PgErrors, UnavailableIsA503WithRetryAfter) {
    pg::ConnectionLost lost("socket closed", 3);
    const rivet::HttpError& http = lost;
    EXPECT_EQ(http.status(), 503);
    EXPECT_EQ(http.message(), "database unavailable");  // the reason is not the client's
    EXPECT_EQ(lost.reason(), "socket closed");
    ASSERT_EQ(http.headers().size(), 1u);
    EXPECT_EQ(http.headers()[0].first, "Retry-After");
    EXPECT_EQ(http.headers()[0].second, "3");
    pg::UniqueViolation dup("duplicate key", "23505", "Key (title)=(x) already exists.");
    const pg::Error& e = dup;
    EXPECT_EQ(e.sqlstate(), "23505");
    EXPECT_EQ(e.detail(), "Key (title)=(x) already exists.");
}

TEST(PgPool, UsedOffALoopIsALogicError) {
    pg::Pool db({.conninfo = "host=/nonexistent"});
    EXPECT_THROW(db.stats(), std::logic_error);
    EXPECT_THROW(pg::Pool({.max_connections = 0}), std::invalid_argument);
}
