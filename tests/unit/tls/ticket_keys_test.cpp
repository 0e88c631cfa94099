#include "tls/ticket_keys.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

using rivet::tls::TicketKey;
using rivet::tls::TicketKeys;

namespace {

bool same(const TicketKey& a, const TicketKey& b) {
    return std::memcmp(&a, &b, sizeof a) == 0;
}

}  // namespace

TEST(TlsTicketKeys, RotateEveryLifetimeKeepingThePreviousOne) {
    auto now = std::make_shared<uint64_t>(500);
    TicketKeys keys(100, [now] { return *now; });
    TicketKey first = keys.current();
    *now += 99;
    EXPECT_TRUE(same(keys.current(), first));
    auto found = keys.find(first.name);
    ASSERT_TRUE(found);
    EXPECT_EQ(found->match, TicketKeys::Match::Current);

    *now += 1;  // one lifetime: a new current key, the first one is the previous
    TicketKey second = keys.current();
    EXPECT_FALSE(same(second, first));
    EXPECT_NE(std::memcmp(second.name, first.name, sizeof first.name), 0);
    found = keys.find(first.name);
    ASSERT_TRUE(found);
    EXPECT_EQ(found->match, TicketKeys::Match::Previous);
    EXPECT_TRUE(same(found->key, first));

    *now += 100;  // another: the first key is gone
    EXPECT_FALSE(keys.find(first.name));
    ASSERT_TRUE(keys.find(second.name));
    EXPECT_EQ(keys.find(second.name)->match, TicketKeys::Match::Previous);
}

TEST(TlsTicketKeys, IdlePastTwoLifetimesForgetsBoth) {
    auto now = std::make_shared<uint64_t>(0);
    TicketKeys keys(10, [now] { return *now; });
    TicketKey first = keys.current();
    *now += 25;
    EXPECT_FALSE(keys.find(first.name));
    TicketKey fresh = keys.current();
    EXPECT_FALSE(same(fresh, first));
    *now += 9;  // the fresh key's lifetime counts from when it was made
    EXPECT_TRUE(same(keys.current(), fresh));
}

TEST(TlsTicketKeys, UnknownNamesAreNotFound) {
    TicketKeys keys(3600);
    uint8_t name[16] = {};
    EXPECT_FALSE(keys.find(name));
}

TEST(TlsTicketKeys, ALifetimeChangeKeepsTheKeys) {
    auto now = std::make_shared<uint64_t>(0);
    TicketKeys keys(1000, [now] { return *now; });
    TicketKey first = keys.current();
    keys.set_lifetime(10);
    *now += 10;
    EXPECT_FALSE(same(keys.current(), first));
    ASSERT_TRUE(keys.find(first.name));
}

TEST(TlsTicketKeys, SharedByThreads) {
    // Every loop thread seals and opens at once (TSan watches this one) while the keys rotate.
    auto now = std::make_shared<std::atomic<uint64_t>>(0);
    TicketKeys keys(2, [now] { return now->load(); });
    std::vector<std::thread> threads;
    std::atomic<int> checked{0}, lost{0};
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&] {
            for (int i = 0; i < 2000; ++i) {
                uint64_t before = now->load();
                TicketKey k = keys.current();
                auto found = keys.find(k.name);
                // With the clock still, a key sealed a moment ago must open (the clock moving
                // twice past in between is legitimate, and not counted).
                if (now->load() == before) {
                    checked++;
                    if (!found || !same(found->key, k)) lost++;
                }
                if (i % 100 == 0) now->fetch_add(1);
            }
        });
    for (auto& t : threads) t.join();
    EXPECT_GT(checked.load(), 1000);
    EXPECT_EQ(lost.load(), 0);
}
