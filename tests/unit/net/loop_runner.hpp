// A net::Loop on a thread of its own for a test: stopped and joined at the end of the test.
// on_loop() runs a function on the loop's thread and waits for it, bounded so that a broken loop
// fails the test instead of hanging it.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <memory>
#include <stdexcept>
#include <thread>
#include <type_traits>

#include "net/loop.hpp"

namespace rivet::net::testing {

class LoopRunner {
public:
    LoopRunner() : thread_([this] { loop.run(); }) {}
    ~LoopRunner() {
        loop.stop();
        thread_.join();
    }
    LoopRunner(const LoopRunner&) = delete;
    LoopRunner& operator=(const LoopRunner&) = delete;

    // Runs `fn` on the loop's thread and returns what it returns. Shared state: if the wait gives
    // up, the task may still run later and must find it alive.
    template <class F>
    auto on_loop(F fn) {
        using Result = decltype(fn());
        auto done = std::make_shared<std::promise<Result>>();
        auto result = done->get_future();
        loop.post([fn = std::move(fn), done]() mutable {
            if constexpr (std::is_void_v<Result>) {
                fn();
                done->set_value();
            } else {
                done->set_value(fn());
            }
        });
        if (result.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
            ADD_FAILURE() << "the loop did not run a posted task within 10 s";
            throw std::runtime_error("loop stuck");
        }
        return result.get();
    }

    Loop loop;

private:
    std::thread thread_;
};

}  // namespace rivet::net::testing
