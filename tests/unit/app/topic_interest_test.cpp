// The relay's bookkeeping (app::TopicInterest): a topic is subscribed on Redis while any holder
// (a loop's WebSockets, the event streams) has subscribers to it, with one SUBSCRIBE or
// UNSUBSCRIBE of a channel in flight at most; nothing is sent while the link is down, every
// wanted topic is subscribed again when it is back, and a topic neither wanted nor subscribed
// is forgotten.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "app/websocket/topic_interest.hpp"

using rivet::app::TopicInterest;
using Change = TopicInterest::Change;
using Send = TopicInterest::Send;

namespace {

TopicInterest linked() {
    TopicInterest t;
    EXPECT_TRUE(t.link_up().empty());
    return t;
}

}  // namespace

TEST(TopicInterest, FirstHolderSubscribesLastOneUnsubscribes) {
    TopicInterest t = linked();
    EXPECT_EQ(t.report("chat", Change::First), Send::Subscribe);  // loop 0's first WebSocket
    EXPECT_EQ(t.subscribed("chat"), Send::Nothing);
    EXPECT_EQ(t.report("chat", Change::First), Send::Nothing);  // loop 1's, or the streams'
    EXPECT_EQ(t.holders("chat"), 2u);
    EXPECT_EQ(t.report("chat", Change::Last), Send::Nothing);
    EXPECT_EQ(t.report("chat", Change::Last), Send::Unsubscribe);
    EXPECT_EQ(t.topics(), 1u);  // until Redis confirms
    EXPECT_EQ(t.unsubscribed("chat"), Send::Nothing);
    EXPECT_EQ(t.topics(), 0u);  // forgotten
}

TEST(TopicInterest, OneCommandInFlightPerChannel) {
    TopicInterest t = linked();
    ASSERT_EQ(t.report("x", Change::First), Send::Subscribe);
    // Gone and back before the SUBSCRIBE is confirmed: nothing more is sent meanwhile.
    EXPECT_EQ(t.report("x", Change::Last), Send::Nothing);
    EXPECT_EQ(t.report("x", Change::First), Send::Nothing);
    EXPECT_EQ(t.subscribed("x"), Send::Nothing);  // wanted, and subscribed: settled
    // Gone: unsubscribing; wanted again before that is confirmed: subscribed after it.
    ASSERT_EQ(t.report("x", Change::Last), Send::Unsubscribe);
    EXPECT_EQ(t.report("x", Change::First), Send::Nothing);
    EXPECT_EQ(t.unsubscribed("x"), Send::Subscribe);
    // Gone while subscribing: unsubscribed once the SUBSCRIBE is confirmed.
    EXPECT_EQ(t.report("x", Change::Last), Send::Nothing);
    EXPECT_EQ(t.subscribed("x"), Send::Unsubscribe);
    EXPECT_EQ(t.unsubscribed("x"), Send::Nothing);
    EXPECT_EQ(t.topics(), 0u);
}

TEST(TopicInterest, NothingSentWhileDownEverythingWantedAgainWhenUp) {
    TopicInterest t;  // not linked yet: reports are counted only
    EXPECT_EQ(t.report("a", Change::First), Send::Nothing);
    EXPECT_EQ(t.report("b", Change::First), Send::Nothing);
    EXPECT_EQ(t.report("c", Change::First), Send::Nothing);
    EXPECT_EQ(t.report("c", Change::Last), Send::Nothing);
    EXPECT_EQ(t.topics(), 2u);  // c forgotten at once
    std::vector<std::string> up = t.link_up();
    std::sort(up.begin(), up.end());
    EXPECT_EQ(up, (std::vector<std::string>{"a", "b"}));
    EXPECT_EQ(t.subscribed("a"), Send::Nothing);
    EXPECT_EQ(t.report("b", Change::Last), Send::Nothing);  // its SUBSCRIBE is out

    // Lost: nothing is subscribed on Redis now; b (wanted by none) is forgotten, a is kept.
    t.link_lost();
    EXPECT_EQ(t.topics(), 1u);
    EXPECT_EQ(t.subscribed("b"), Send::Nothing);  // a confirmation of the old link: ignored
    EXPECT_EQ(t.report("d", Change::First), Send::Nothing);
    up = t.link_up();
    std::sort(up.begin(), up.end());
    EXPECT_EQ(up, (std::vector<std::string>{"a", "d"}));
}

TEST(TopicInterest, UnpairedReportsAndStrayConfirmationsChangeNothing) {
    TopicInterest t = linked();
    EXPECT_EQ(t.report("never", Change::Last), Send::Nothing);
    EXPECT_EQ(t.subscribed("never"), Send::Nothing);
    EXPECT_EQ(t.unsubscribed("never"), Send::Nothing);
    EXPECT_EQ(t.topics(), 0u);
    ASSERT_EQ(t.report("y", Change::First), Send::Subscribe);
    EXPECT_EQ(t.unsubscribed("y"), Send::Nothing);  // not what is in flight
    EXPECT_EQ(t.subscribed("y"), Send::Nothing);
    EXPECT_EQ(t.holders("y"), 1u);
}
