#include "app/ip_address.hpp"

#include <gtest/gtest.h>

using namespace rivet::app;

namespace {

IpAddress ip(const char* text) {
    IpAddress a;
    EXPECT_TRUE(parse_ip(text, a)) << text;
    return a;
}

}  // namespace

TEST(IpAddress, ParseAndFormat) {
    EXPECT_EQ(to_string(ip("10.1.2.3")), "10.1.2.3");
    EXPECT_EQ(to_string(ip(" ::1 ")), "::1");
    EXPECT_EQ(to_string(ip("[2001:db8::1]")), "2001:db8::1");
    EXPECT_TRUE(ip("10.1.2.3").is_v4());
    IpAddress a;
    EXPECT_FALSE(parse_ip("example.com", a));
    EXPECT_FALSE(parse_ip("1.2.3", a));
    EXPECT_FALSE(parse_ip("", a));
}

TEST(IpAddress, Networks) {
    IpNetwork n;
    ASSERT_TRUE(parse_network("10.0.0.0/8", n));
    EXPECT_TRUE(n.contains(ip("10.255.1.1")));
    EXPECT_FALSE(n.contains(ip("11.0.0.1")));
    ASSERT_TRUE(parse_network("192.168.1.77/24", n));  // host bits are ignored
    EXPECT_TRUE(n.contains(ip("192.168.1.1")));
    ASSERT_TRUE(parse_network("2001:db8::/33", n));
    EXPECT_TRUE(n.contains(ip("2001:db8:7fff::1")));
    EXPECT_FALSE(n.contains(ip("2001:db8:8000::1")));
    ASSERT_TRUE(parse_network("127.0.0.3", n));
    EXPECT_TRUE(n.contains(ip("127.0.0.3")));
    EXPECT_FALSE(n.contains(ip("127.0.0.4")));
    EXPECT_FALSE(parse_network("10.0.0.0/33", n));
    EXPECT_FALSE(parse_network("10.0.0.0/", n));
    EXPECT_FALSE(parse_network("::/129", n));
}

TEST(IpAddress, ForwardedForOnlyFromTrustedProxies) {
    NetworkList trusted;
    ASSERT_EQ(trusted.assign({"127.0.0.1", "10.0.0.0/8"}), "");
    rivet::http::Header h[] = {{"Host", "x"}, {"X-Forwarded-For", "1.1.1.1, 2.2.2.2, 10.0.0.5"}};
    EXPECT_EQ(to_string(forwarded_client(ip("127.0.0.1"), h, trusted)), "2.2.2.2");
    EXPECT_EQ(to_string(forwarded_client(ip("9.9.9.9"), h, trusted)), "9.9.9.9");
    rivet::http::Header junk[] = {{"X-Forwarded-For", "nonsense"}};
    EXPECT_EQ(to_string(forwarded_client(ip("127.0.0.1"), junk, trusted)), "127.0.0.1");
    rivet::http::Header none[] = {{"Host", "x"}};
    EXPECT_EQ(to_string(forwarded_client(ip("127.0.0.1"), none, trusted)), "127.0.0.1");
    EXPECT_EQ(trusted.assign({"10.0.0.0/8", "bogus"}), "bogus");
}
