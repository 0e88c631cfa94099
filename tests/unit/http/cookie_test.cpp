#include "http/cookie.hpp"

#include <gtest/gtest.h>

namespace {

using rivet::http::find_cookie;
using rivet::http::is_cookie_attribute_value;
using rivet::http::is_cookie_name;
using rivet::http::is_cookie_value;

TEST(CookieGrammar, NamesAreTokens) {
    EXPECT_TRUE(is_cookie_name("session_id"));
    EXPECT_TRUE(is_cookie_name("__Host-x"));
    EXPECT_FALSE(is_cookie_name(""));
    EXPECT_FALSE(is_cookie_name("a b"));
    EXPECT_FALSE(is_cookie_name("a=b"));
    EXPECT_FALSE(is_cookie_name("a;b"));
    EXPECT_FALSE(is_cookie_name("caf\xc3\xa9"));
}

TEST(CookieGrammar, ValuesAreCookieOctetsOptionallyQuoted) {
    EXPECT_TRUE(is_cookie_value(""));
    EXPECT_TRUE(is_cookie_value("abc-_.~!#$%&'()*+/:<=>?@[]^`{|}"));
    EXPECT_TRUE(is_cookie_value("\"quoted\""));
    EXPECT_TRUE(is_cookie_value("\"\""));
    for (const char* bad : {"a b", "a,b", "a;b", "a\\b", "a\"b", "\"open", "a\tb", "a\rb", "a\nb",
                            "\x7f", "caf\xc3\xa9"})
        EXPECT_FALSE(is_cookie_value(bad)) << bad;
    EXPECT_FALSE(is_cookie_value(std::string_view("a\0b", 3)));
}

TEST(CookieGrammar, AttributeValuesRefuseSemicolonsAndControls) {
    EXPECT_TRUE(is_cookie_attribute_value("/some path/x"));
    EXPECT_FALSE(is_cookie_attribute_value("/a;b"));
    EXPECT_FALSE(is_cookie_attribute_value("/a\r\nSet-Cookie: x=y"));
    EXPECT_FALSE(is_cookie_attribute_value(std::string_view("/\0", 2)));
}

TEST(CookieField, FindsPairsByExactName) {
    const std::string_view field = "a=1; session=abc.def;theme=dark ;  q = \"x y\" ";
    EXPECT_EQ(find_cookie(field, "a"), "1");
    EXPECT_EQ(find_cookie(field, "session"), "abc.def");
    EXPECT_EQ(find_cookie(field, "theme"), "dark");
    EXPECT_EQ(find_cookie(field, "q"), "x y");
    EXPECT_EQ(find_cookie(field, "A"), std::nullopt);  // names are case-sensitive
    EXPECT_EQ(find_cookie(field, "sess"), std::nullopt);
    EXPECT_EQ(find_cookie(field, "missing"), std::nullopt);
}

TEST(CookieField, FirstOfRepeatedNamesEmptyValuesAndJunk) {
    EXPECT_EQ(find_cookie("x=1; x=2", "x"), "1");
    EXPECT_EQ(find_cookie("x=", "x"), "");
    EXPECT_EQ(find_cookie("junk; ;;x=v=w", "x"), "v=w");  // only the first '=' splits
    EXPECT_EQ(find_cookie("x", "x"), std::nullopt);       // no '=': no pair
    EXPECT_EQ(find_cookie("", "x"), std::nullopt);
    EXPECT_EQ(find_cookie(";;;", "x"), std::nullopt);
}

}  // namespace
