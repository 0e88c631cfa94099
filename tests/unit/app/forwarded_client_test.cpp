#include "app/operations/ip_address.hpp"

#include <gtest/gtest.h>

using namespace rivet::app;

namespace {

IpAddress ip(const char* text) {
    IpAddress a;
    EXPECT_TRUE(parse_ip(text, a)) << text;
    return a;
}

}  // namespace

TEST(ForwardedClient, OnlyFromTrustedProxies) {
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
