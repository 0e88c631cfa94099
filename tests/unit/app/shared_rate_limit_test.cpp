// What the shared rate limit checks without a Redis: its setting's syntax. The script and the
// fallbacks run against a real redis-server in tests/e2e/test_shared_rate_limit.py.
#include "app/operations/shared_rate_limit.hpp"

#include <gtest/gtest.h>
#include <openssl/sha.h>

#include <string>

using rivet::app::SharedRateLimit;

TEST(SharedRateLimit, EndpointIsAnAddressAndAPort) {
    auto v4 = SharedRateLimit::parse_endpoint("127.0.0.1:6379");
    ASSERT_TRUE(v4);
    EXPECT_EQ(v4->host, "127.0.0.1");
    EXPECT_EQ(v4->port, 6379);
    auto v6 = SharedRateLimit::parse_endpoint("[::1]:7000");
    ASSERT_TRUE(v6);
    EXPECT_EQ(v6->host, "::1");
    EXPECT_EQ(v6->port, 7000);
}

TEST(SharedRateLimit, RefusesWhatIsNotHostColonPort) {
    for (const char* bad :
         {"", "127.0.0.1", ":6379", "127.0.0.1:", "127.0.0.1:0", "127.0.0.1:65536",
          "127.0.0.1:63x9", "redis.local:6379", "[::1:6379", "::1:6379x"})
        EXPECT_FALSE(SharedRateLimit::parse_endpoint(bad)) << bad;
}

TEST(SharedRateLimit, ScriptIsNamedByItsSha1) {
    const std::string& script = SharedRateLimit::script();
    EXPECT_NE(script.find("redis.call('TIME')"), std::string::npos);
    unsigned char digest[SHA_DIGEST_LENGTH];
    SHA1(reinterpret_cast<const unsigned char*>(script.data()), script.size(), digest);
    std::string hex;
    for (unsigned char byte : digest) {
        static const char kHex[] = "0123456789abcdef";
        hex.push_back(kHex[byte >> 4]);
        hex.push_back(kHex[byte & 15]);
    }
    EXPECT_EQ(SharedRateLimit::script_sha1(), hex) << "the script changed: write its new SHA-1";
}
