#include "tls/ticket_keys.hpp"

#include <unistd.h>

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

// ---------------------------------------------------------------------------------------------
// Keys from a ticket key file (shared by replicas): the first seals, all open, none rotates.

namespace {

std::string temp_file(const std::string& bytes) {
    std::string path = testing::TempDir() + "rivet-ticket-keys-XXXXXX";
    int fd = mkstemp(path.data());
    EXPECT_GE(fd, 0);
    EXPECT_EQ(write(fd, bytes.data(), bytes.size()), ssize_t(bytes.size()));
    close(fd);
    return path;
}

std::string key_bytes(char fill) {
    std::string k(80, fill);
    k[0] = 'n';  // names differ by the fill
    return k;
}

}  // namespace

TEST(TlsTicketKeys, FileKeysFirstSealsAllOpenNoneRotates) {
    std::string path = temp_file(key_bytes('a') + key_bytes('b') + key_bytes('c'));
    auto read = rivet::tls::read_ticket_key_file(path);
    unlink(path.c_str());
    ASSERT_EQ(read.size(), 3u);
    // The layout: name, HMAC key, AES key.
    EXPECT_EQ(read[1].name[1], 'b');
    EXPECT_EQ(read[1].hmac_key[0], 'b');
    EXPECT_EQ(read[1].aes_key[31], 'b');
    TicketKeys keys(read);
    EXPECT_EQ(keys.rotation(), TicketKeys::Rotation::FromFile);
    EXPECT_TRUE(same(keys.current(), read[0]));
    EXPECT_EQ(keys.find(read[0].name)->match, TicketKeys::Match::Current);
    EXPECT_EQ(keys.find(read[2].name)->match, TicketKeys::Match::Previous);
    EXPECT_TRUE(same(keys.find(read[2].name)->key, read[2]));
    keys.set_lifetime(1);  // a lifetime does not rotate an operator's keys
    EXPECT_TRUE(same(keys.current(), read[0]));
    uint8_t other[16] = {};
    EXPECT_FALSE(keys.find(other));
}

TEST(TlsTicketKeys, BadKeyFilesAreRefusedNamingTheFile) {
    auto refused = [](const std::string& bytes, const std::string& why) {
        std::string path = temp_file(bytes);
        try {
            rivet::tls::read_ticket_key_file(path);
            ADD_FAILURE() << "accepted: " << why;
        } catch (const std::runtime_error& e) {
            std::string text = e.what();
            EXPECT_NE(text.find(path), std::string::npos) << text;
            EXPECT_NE(text.find(why), std::string::npos) << text;
        }
        unlink(path.c_str());
    };
    refused("", "0 bytes");
    refused(std::string(79, 'x'), "79 bytes");
    refused(key_bytes('a') + "x", "81 bytes");
    refused(std::string(48, 'x'), "48 bytes");  // nginx's AES-128 keys: not served
    std::string many;
    for (size_t i = 0; i <= rivet::tls::kMaxTicketKeys; ++i) many += key_bytes(char('A' + i));
    refused(many, std::to_string(many.size()) + " bytes");
    refused(key_bytes('a') + key_bytes('b') + key_bytes('a'), "keys 1 and 3 have the same name");
    EXPECT_THROW(rivet::tls::read_ticket_key_file("/nonexistent/rivet-keys"), std::runtime_error);
    EXPECT_THROW(TicketKeys(std::vector<TicketKey>{}), std::invalid_argument);
}
