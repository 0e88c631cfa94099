// Unit tests of the form helpers that need no server: filename sanitizing and urlencoded forms
// with their limits (multipart bodies are tested through the demo, tests/e2e/test_forms.py).
#include <gtest/gtest.h>

#include <string>

#include <rivet/form.hpp>
#include <rivet/http_error.hpp>

using namespace std::string_literals;

TEST(SanitizeFilename, NeverAPath) {
    EXPECT_EQ(rivet::sanitize_filename("report.pdf"), "report.pdf");
    EXPECT_EQ(rivet::sanitize_filename("../../etc/passwd"), "passwd");
    EXPECT_EQ(rivet::sanitize_filename("..\\..\\boot.ini"), "boot.ini");
    EXPECT_EQ(rivet::sanitize_filename("dir/"), "upload");
    EXPECT_EQ(rivet::sanitize_filename(".."), "upload");
    EXPECT_EQ(rivet::sanitize_filename("."), "upload");
    EXPECT_EQ(rivet::sanitize_filename(""), "upload");
    EXPECT_EQ(rivet::sanitize_filename("...hidden"), "hidden");
    EXPECT_EQ(rivet::sanitize_filename("a\0b\x01\x1f\x7f.txt"s), "ab.txt");
    EXPECT_EQ(rivet::sanitize_filename("x|y;z*?<>\"'`$&.sh"), "x_y_z_________.sh");
    EXPECT_EQ(rivet::sanitize_filename("résumé 2024.pdf"), "résumé 2024.pdf");
    EXPECT_EQ(rivet::sanitize_filename("name   "), "name");
}

TEST(SanitizeFilename, LongNamesAreCutOnACharacterBoundary) {
    const std::string long_ascii(300, 'a');
    EXPECT_EQ(rivet::sanitize_filename(long_ascii), std::string(200, 'a'));
    std::string name = "x";
    for (int i = 0; i < 150; ++i) name += "é";  // 2 bytes each
    const std::string cut = rivet::sanitize_filename(name);
    EXPECT_EQ(cut.size(), 199u);  // "x" and 99 whole "é": never half of one
    EXPECT_EQ(cut, name.substr(0, 199));
}

TEST(UrlencodedForm, DecodesLikeTheQueryString) {
    const rivet::Form f = rivet::parse_urlencoded_form("a=1+2&b=%C3%A9&a=3&flag&=e&bad=%zz");
    ASSERT_EQ(f.fields.size(), 6u);
    EXPECT_EQ(*f.field("a"), "1 2");
    EXPECT_EQ(*f.field("b"), "é");
    EXPECT_EQ(f.fields[2].value, "3");
    EXPECT_EQ(*f.field("flag"), "");
    EXPECT_EQ(*f.field(""), "e");
    EXPECT_EQ(*f.field("bad"), "%zz");
    EXPECT_EQ(f.field("missing"), nullptr);
    EXPECT_TRUE(f.files.empty());
}

TEST(UrlencodedForm, EachLimitIsExactAndNamed) {
    rivet::FormLimits lim;
    lim.max_parts = 2;
    lim.max_field_bytes = 3;
    lim.max_urlencoded_bytes = 11;
    EXPECT_EQ(rivet::parse_urlencoded_form("a=123&b=456", lim).fields.size(), 2u);
    auto refused = [&](std::string_view body, std::string_view words) {
        try {
            rivet::parse_urlencoded_form(body, lim);
            ADD_FAILURE() << body;
        } catch (const rivet::HttpError& e) {
            EXPECT_EQ(e.status(), 413);
            EXPECT_NE(std::string(e.message()).find(words), std::string::npos) << e.message();
        }
    };
    refused("a=1&b=2&c=3", "max_parts (2)");
    refused("a=1234", "form field a is over max_field_bytes (3)");
    refused("a=123&b=4567", "max_urlencoded_bytes (11)");
}
