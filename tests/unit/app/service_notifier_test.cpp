// The watchdog's side of app::ServiceNotifier: whose watchdog it is (WATCHDOG_PID), what
// WATCHDOG_USEC it takes, and app::LoopHeartbeat, which passes only while every loop runs.
#include "app/service_notifier.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <string>
#include <thread>

#include "../net/loop_runner.hpp"
#include "app/loop_heartbeat.hpp"

namespace rivet::app {
namespace {

using namespace std::chrono_literals;
using net::testing::LoopRunner;

const std::string kSocket = "@rivet-notifier-test";  // nobody reads it: sends fail quietly

TEST(ServiceNotifier, TakesTheWatchdogThatIsOurs) {
    const std::string self = std::to_string(getpid());
    EXPECT_EQ(ServiceNotifier(kSocket, "200000", "").watchdog(), 200000us);
    EXPECT_EQ(ServiceNotifier(kSocket, "200000", self).watchdog(), 200000us);
    EXPECT_EQ(ServiceNotifier(kSocket, "200000", "1").watchdog(), std::nullopt);  // another's
    EXPECT_EQ(ServiceNotifier(kSocket, "", "").watchdog(), std::nullopt);
    EXPECT_EQ(ServiceNotifier("", "200000", "").watchdog(), std::nullopt);  // nobody to ping
    for (auto bad : {"0", "-5", "2s", "x"})
        EXPECT_EQ(ServiceNotifier(kSocket, bad, "").watchdog(), std::nullopt) << bad;
}

TEST(ServiceNotifier, BeatsOnlyWhileWatching) {
    LoopRunner loop;
    ServiceNotifier quiet(kSocket, "", "");
    quiet.watch({&loop.loop});
    EXPECT_EQ(quiet.next_beat(), std::nullopt);  // no watchdog: nothing to beat
    ServiceNotifier n(kSocket, "200000", "");
    const auto before = ServiceNotifier::Clock::now();
    n.watch({&loop.loop});
    ASSERT_TRUE(n.next_beat());
    EXPECT_GE(*n.next_beat(), before + 100ms);  // half the interval
    n.beat();
    EXPECT_GE(*n.next_beat(), before + 200ms);
    n.unwatch();
    EXPECT_EQ(n.next_beat(), std::nullopt);
}

// Polls `heartbeat` until it passes; bounded, so a broken one fails instead of hanging.
bool passes_soon(LoopHeartbeat& heartbeat) {
    for (int i = 0; i < 1000; ++i) {
        if (heartbeat.all_alive()) return true;
        std::this_thread::sleep_for(10ms);
    }
    return false;
}

TEST(LoopHeartbeat, FailsWhileOneLoopIsHeldAndPassesOnceItIsFree) {
    LoopRunner a, b;
    LoopHeartbeat heartbeat({&a.loop, &b.loop});
    ASSERT_TRUE(passes_soon(heartbeat));
    ASSERT_TRUE(passes_soon(heartbeat));

    std::promise<void> release;
    std::promise<void> held;
    b.loop.post([&held, wait = release.get_future().share()] {
        held.set_value();
        wait.wait();  // a handler that does not return
    });
    held.get_future().wait();
    // The probe posted before the hold runs on both loops (on b before the hold; a free loop
    // may take its time on a busy machine); the one posted once it has cannot run on b.
    ASSERT_TRUE(passes_soon(heartbeat));
    for (int i = 0; i < 5; ++i) {
        EXPECT_FALSE(heartbeat.all_alive());
        std::this_thread::sleep_for(5ms);
    }
    release.set_value();
    EXPECT_TRUE(passes_soon(heartbeat));
}

}  // namespace
}  // namespace rivet::app
