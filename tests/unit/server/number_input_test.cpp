#include "server/number_input.hpp"

#include <gtest/gtest.h>

using rivet::server::parse_count;
using rivet::server::parse_json_count;
using rivet::server::parse_real;

TEST(NumberInput, Counts) {
    EXPECT_EQ(parse_count("0", 10, "n").value, 0u);
    EXPECT_EQ(parse_count(" 10 ", 10, "n").value, 10u);
    EXPECT_EQ(parse_count("+7", 10, "n").value, 7u);
    EXPECT_EQ(parse_count("11", 10, "n").error, "n must be at most 10");
    EXPECT_EQ(parse_count("-1", 10, "n").error, "n must not be negative");
    EXPECT_EQ(parse_count("1.5", 10, "n").error, "n must be an integer");
    EXPECT_EQ(parse_count("1e3", 10, "n").error, "n must be an integer");
    EXPECT_EQ(parse_count("abc", 10, "n").error, "n is not a number");
    EXPECT_EQ(parse_count("", 10, "n").error, "n is empty");
    EXPECT_EQ(parse_count("99999999999999999999999", 10, "n").error, "n must be at most 10");
}

TEST(NumberInput, JsonCounts) {
    using nlohmann::json;
    EXPECT_EQ(parse_json_count(json(5), 10, "n").value, 5u);
    EXPECT_EQ(parse_json_count(json("5"), 10, "n").value, 5u);
    EXPECT_EQ(parse_json_count(json(-5), 10, "n").error, "n must not be negative");
    EXPECT_EQ(parse_json_count(json(2.5), 10, "n").error, "n must be an integer");
    EXPECT_EQ(parse_json_count(json(nullptr), 10, "n").error, "missing n");
    EXPECT_EQ(parse_json_count(json::array(), 10, "n").error,
              "n must be a number or a numeric string");
}

TEST(NumberInput, Reals) {
    EXPECT_DOUBLE_EQ(*parse_real("0.5", "x").value, 0.5);
    EXPECT_DOUBLE_EQ(*parse_real("-1e-3", "x").value, -0.001);
    EXPECT_EQ(parse_real("0.5x", "x").error, "x is not a number");
    EXPECT_EQ(parse_real("inf", "x").error, "x must be finite");
    EXPECT_EQ(parse_real("nan", "x").error, "x must be finite");
}
