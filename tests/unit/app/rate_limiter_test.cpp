#include "app/operations/rate_limiter.hpp"

#include <gtest/gtest.h>

using rivet::app::IpAddress;
using rivet::app::RateLimiter;

namespace {

IpAddress v4(uint32_t n) {
    uint8_t b[4] = {uint8_t(n >> 24), uint8_t(n >> 16), uint8_t(n >> 8), uint8_t(n)};
    return IpAddress::v4(b);
}

constexpr uint64_t kSecond = 1'000'000'000;

}  // namespace

TEST(RateLimiter, BurstThenRate) {
    RateLimiter rl(1000);
    uint64_t t = 5 * kSecond;
    int allowed = 0;
    for (int i = 0; i < 10; ++i) allowed += rl.check(v4(1), t, 2.0, 5.0).allowed;
    EXPECT_EQ(allowed, 5);
    auto refused = rl.check(v4(1), t, 2.0, 5.0);
    EXPECT_FALSE(refused.allowed);
    EXPECT_EQ(refused.retry_after_s, 1u);
    // Half a second later one token is back, and only one.
    EXPECT_TRUE(rl.check(v4(1), t + kSecond / 2, 2.0, 5.0).allowed);
    EXPECT_FALSE(rl.check(v4(1), t + kSecond / 2, 2.0, 5.0).allowed);
    // Another client has its own bucket.
    EXPECT_TRUE(rl.check(v4(2), t, 2.0, 5.0).allowed);
    // A long rest refills up to the burst, not beyond.
    allowed = 0;
    for (int i = 0; i < 10; ++i) allowed += rl.check(v4(1), t + 100 * kSecond, 2.0, 5.0).allowed;
    EXPECT_EQ(allowed, 5);
}

TEST(RateLimiter, RetryAfterIsWholeSecondsToTheNextToken) {
    RateLimiter rl(1000);
    uint64_t t = kSecond;
    EXPECT_TRUE(rl.check(v4(1), t, 0.25, 1.0).allowed);
    auto r = rl.check(v4(1), t, 0.25, 1.0);
    EXPECT_FALSE(r.allowed);
    EXPECT_EQ(r.retry_after_s, 4u);
}

TEST(RateLimiter, AFloodOfAddressesStaysWithinTheTable) {
    RateLimiter rl(1024);
    for (uint32_t i = 0; i < 100'000; ++i) rl.check(v4(0x0a000000 + i), kSecond + i, 1.0, 5.0);
    EXPECT_LE(rl.tracked(), rl.capacity());
    EXPECT_EQ(rl.capacity(), 1024u);
    // A client seen a moment ago usually survives a flood of idle ones; rested buckets go first.
    RateLimiter calm(1024);
    for (int i = 0; i < 3; ++i) calm.check(v4(7), kSecond, 1.0, 5.0);
    for (uint32_t i = 0; i < 500; ++i) calm.check(v4(0x0b000000 + i), 100 * kSecond, 1.0, 5.0);
    int allowed = 0;
    for (int i = 0; i < 5; ++i) allowed += calm.check(v4(7), 100 * kSecond, 1.0, 5.0).allowed;
    EXPECT_EQ(allowed, 5);
}
