#include "net/ip_network.hpp"

#include <netinet/in.h>

#include <gtest/gtest.h>

using namespace rivet::net;

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

TEST(IpAddress, FromSocketAddress) {
    sockaddr_storage ss{};
    auto& a4 = reinterpret_cast<sockaddr_in&>(ss);
    a4.sin_family = AF_INET;
    a4.sin_addr.s_addr = htonl(0x7f000005);
    EXPECT_EQ(to_string(IpAddress::of(ss)), "127.0.0.5");
    ss = {};
    auto& a6 = reinterpret_cast<sockaddr_in6&>(ss);
    a6.sin6_family = AF_INET6;
    a6.sin6_addr.s6_addr[15] = 1;
    EXPECT_EQ(to_string(IpAddress::of(ss)), "::1");
    ss = {};
    ss.ss_family = AF_UNIX;
    EXPECT_TRUE(IpAddress::of(ss) == IpAddress());
}

TEST(IpAddress, NetworkListKeepsTheOldOneOnABadEntry) {
    NetworkList list;
    ASSERT_EQ(list.assign({"127.0.0.0/8", "::1"}), "");
    EXPECT_TRUE(list.contains(ip("127.9.9.9")));
    EXPECT_TRUE(list.contains(ip("::1")));
    EXPECT_FALSE(list.contains(ip("::2")));
    EXPECT_EQ(list.assign({"10.0.0.0/8", "bogus"}), "bogus");
    EXPECT_EQ(list.assign({""}), "\"\"");
    EXPECT_TRUE(list.contains(ip("127.0.0.1")));  // unchanged
}
