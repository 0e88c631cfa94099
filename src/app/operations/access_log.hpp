// AccessLog: one line per answered request, written without blocking the I/O loops.
//
// Each loop formats its lines into its own shard's buffer (the lock there is only ever shared
// with the writer thread, a few times a second); one more shard serves the worker pool. A
// writer thread moves the shards' bytes to the file at least every flush interval, and at
// stop(), so a clean shutdown loses no line. Should the disk fall far behind, a shard stops
// growing at kMaxShardBytes and counts the lines it drops instead; lines a write fails on (a
// full disk) are counted too, and the error log says when the failing starts and ends.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <rivet/operations.hpp>

#include "app/operations/access_log_format.hpp"
#include "app/operations/ip_address.hpp"
#include "app/operations/log_sink.hpp"

namespace rivet::app {

class AccessLog {
public:
    static constexpr size_t kWakeBytes = 256 * 1024;    // a shard this full wakes the writer
    static constexpr size_t kMaxShardBytes = 16 << 20;  // past it, lines are dropped

    explicit AccessLog(unsigned shards);
    ~AccessLog();

    // Opens (or switches to) options.access_log; "off" stops logging. Returns an error text.
    std::string configure(const LogOptions& options);
    std::string reopen() { return sink_.reopen(); }  // logrotate: the renamed file is let go
    bool enabled() const { return enabled_.load(std::memory_order_relaxed); }

    // Formats one line into `shard` (a loop's index, or shards()-1 for the workers), with
    // `client` as its address (record.client is ignored).
    void write(unsigned shard, const AccessRecord& record, const IpAddress& client);
    unsigned shards() const { return unsigned(shards_.size()); }

    void flush();  // everything written so far reaches the file before this returns
    void stop();   // flushes and ends the writer thread; idempotent

    // Lines lost: a shard past kMaxShardBytes, or a failed write.
    uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }

private:
    struct alignas(64) Shard {
        std::mutex mutex;
        std::string buffer;
        LogClock clock;
        // The last client's address as text: consecutive lines mostly share one (keep-alive).
        IpAddress last_client;
        std::string last_client_text;
    };
    void run();
    void write_out();  // on the writer thread (or under flush_mutex_)

    std::vector<std::unique_ptr<Shard>> shards_;
    std::vector<std::string> spares_;  // the writer's side of each shard's double buffer
    std::string batch_;
    LogSink sink_;
    std::atomic<bool> enabled_{false};
    std::atomic<LogFormat> format_{LogFormat::Combined};
    std::atomic<unsigned> flush_ms_{500};
    std::atomic<uint64_t> dropped_{0};
    WriteOutage outage_;  // the writer's (under flush_mutex_)

    std::mutex flush_mutex_;  // one write_out at a time (writer thread or flush())
    std::mutex wake_mutex_;
    std::condition_variable wake_;
    bool wake_requested_ = false;
    bool stopping_ = false;
    std::thread writer_;
};

}  // namespace rivet::app
