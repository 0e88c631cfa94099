// The incremental UTF-8 validator: every kind of invalid sequence refused at its bad byte, code
// points split at every point across feed() calls, the ASCII fast path at every alignment.
#include <gtest/gtest.h>

#include <string>

#include "http/websocket/utf8.hpp"

namespace rivet::http::ws {
namespace {

TEST(WebSocketUtf8, ValidText) {
    for (std::string_view s : {"", "hello", "\xC2\x80", "\xDF\xBF", "\xE0\xA0\x80", "\xED\x9F\xBF",
                               "\xEE\x80\x80", "\xEF\xBF\xBF", "\xF0\x90\x80\x80",
                               "\xF4\x8F\xBF\xBF", "κόσμε", "Hello-µ@ßöäüàá-UTF-8!!"})
        EXPECT_TRUE(valid_utf8(s)) << s;
}

TEST(WebSocketUtf8, InvalidText) {
    for (std::string_view s : {
             "\x80",              // lone continuation
             "\xBF",              //
             "\xC0\xAF",          // overlong '/'
             "\xC1\xBF",          // overlong
             "\xE0\x80\xAF",      // overlong 3-byte
             "\xE0\x9F\xBF",      // overlong 3-byte
             "\xF0\x80\x80\xAF",  // overlong 4-byte
             "\xF0\x8F\xBF\xBF",  // overlong 4-byte
             "\xED\xA0\x80",      // surrogate D800
             "\xED\xBF\xBF",      // surrogate DFFF
             "\xF4\x90\x80\x80",  // U+110000
             "\xF5\x80\x80\x80",  // past U+10FFFF
             "\xFE",
             "\xFF",              //
             "\xC2\x41",          // bad continuation
             "\xE1\x80\x41",      //
             "\xF1\x80\x80\x41",  //
             "abc\xC2",           // cut at the end
             "\xE1\x80",          //
         })
        EXPECT_FALSE(valid_utf8(s)) << testing::PrintToString(s);
}

TEST(WebSocketUtf8, FailsFastAndStaysFailed) {
    Utf8Validator v;
    EXPECT_TRUE(v.feed("abc"));
    EXPECT_TRUE(v.feed("\xED"));   // could still be D7FF
    EXPECT_FALSE(v.feed("\xA0"));  // now a surrogate: refused at this byte
    EXPECT_FALSE(v.feed("abc"));   // stays failed
    EXPECT_FALSE(v.complete());
    v.reset();
    EXPECT_TRUE(v.feed("abc"));
    EXPECT_TRUE(v.complete());
}

TEST(WebSocketUtf8, SplitAtEveryPoint) {
    const std::string valid = "ascii then κόσμε, then \xF0\x9F\x98\x80 and \xE2\x82\xAC done";
    for (size_t a = 0; a <= valid.size(); ++a) {
        for (size_t b = a; b <= valid.size(); ++b) {
            Utf8Validator v;
            ASSERT_TRUE(v.feed(std::string_view(valid).substr(0, a)));
            ASSERT_TRUE(v.feed(std::string_view(valid).substr(a, b - a)));
            ASSERT_TRUE(v.feed(std::string_view(valid).substr(b)));
            ASSERT_TRUE(v.complete()) << a << " " << b;
        }
    }
    const std::string invalid = "0123456789abcdef\xF4\x90\x80\x80zz";
    for (size_t a = 0; a <= invalid.size(); ++a) {
        Utf8Validator v;
        const bool first = v.feed(std::string_view(invalid).substr(0, a));
        const bool second = first && v.feed(std::string_view(invalid).substr(a));
        EXPECT_FALSE(second) << a;
        EXPECT_EQ(first, a <= 17) << a;  // refused once the byte after F4 is in
    }
}

TEST(WebSocketUtf8, FastPathAtEveryAlignment) {
    for (size_t at = 0; at < 40; ++at) {
        std::string s(40, 'a');
        s[at] = char(0xC0);
        EXPECT_FALSE(valid_utf8(s)) << at;
        std::string ok(40, 'a');
        ok.insert(at, "\xC3\xA9");
        EXPECT_TRUE(valid_utf8(ok)) << at;
        std::string cut(40, 'a');
        cut.insert(at, "\xC3");
        EXPECT_FALSE(valid_utf8(cut)) << at;
    }
}

TEST(WebSocketUtf8, EveryTwoByteSequenceAgreesWithADecoder) {
    // A reference for 2-byte strings: decode by the RFC 3629 rules, written plainly.
    for (int a = 0; a < 256; ++a) {
        for (int b = 0; b < 256; ++b) {
            const char s[2] = {char(a), char(b)};
            bool expect;
            if (a < 0x80)
                expect = b < 0x80;
            else if (a >= 0xC2 && a <= 0xDF)
                expect = b >= 0x80 && b <= 0xBF;
            else
                expect = false;
            ASSERT_EQ(valid_utf8(std::string_view(s, 2)), expect) << a << " " << b;
        }
    }
}

}  // namespace
}  // namespace rivet::http::ws
