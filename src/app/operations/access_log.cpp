#include "app/operations/access_log.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>

#include "app/operations/error_log.hpp"

namespace rivet::app {

AccessLog::AccessLog(unsigned shards) : spares_(shards) {
    for (unsigned i = 0; i < shards; ++i) shards_.push_back(std::make_unique<Shard>());
    writer_ = std::thread([this] { run(); });
}

AccessLog::~AccessLog() {
    stop();
}

std::string AccessLog::configure(const LogOptions& options) {
    bool on = !options.access_log.empty() && options.access_log != "off";
    format_.store(options.format, std::memory_order_relaxed);
    flush_ms_.store(options.flush_ms ? options.flush_ms : 500, std::memory_order_relaxed);
    if (on && options.access_log == sink_.target() && sink_.enabled()) {
        enabled_.store(true, std::memory_order_relaxed);
        return {};
    }
    if (!on) {
        enabled_.store(false, std::memory_order_relaxed);
        flush();  // what was logged until now still belongs to the old file
        sink_.open("off");
        return {};
    }
    flush();
    if (auto e = sink_.open(options.access_log); !e.empty()) return e;
    enabled_.store(true, std::memory_order_relaxed);
    return {};
}

void AccessLog::write(unsigned shard, const AccessRecord& record, const IpAddress& client) {
    Shard& s = *shards_[shard < shards_.size() ? shard : shards_.size() - 1];
    bool wake = false;
    {
        std::lock_guard lock(s.mutex);
        if (s.buffer.size() >= kMaxShardBytes) {
            dropped_.fetch_add(1, std::memory_order_relaxed);
            return;
        }
        s.clock.update(time(nullptr));
        if (s.last_client_text.empty() || !(s.last_client == client)) {
            s.last_client = client;
            s.last_client_text.clear();
            format_ip(client, s.last_client_text);
        }
        AccessRecord r = record;
        r.client = s.last_client_text;
        format_access_line(format_.load(std::memory_order_relaxed), r, s.clock, s.buffer);
        wake = s.buffer.size() >= kWakeBytes;
    }
    if (wake) {
        std::lock_guard lock(wake_mutex_);
        wake_requested_ = true;
        wake_.notify_one();
    }
}

void AccessLog::write_out() {
    batch_.clear();
    for (size_t i = 0; i < shards_.size(); ++i) {
        Shard& s = *shards_[i];
        {
            std::lock_guard lock(s.mutex);
            if (s.buffer.empty()) continue;
            s.buffer.swap(spares_[i]);
        }
        // Whole lines only ever reach a shard, so shards can be written one after the other.
        batch_ += spares_[i];
        spares_[i].clear();
        if (spares_[i].capacity() > kWakeBytes * 4) std::string().swap(spares_[i]);
    }
    if (!batch_.empty()) {
        const uint64_t dropped_before = dropped_.load(std::memory_order_relaxed);
        const SinkWrite w = sink_.write(batch_);
        if (w.error != 0) {  // every line not wholly written is lost, a cut one too
            const auto unwritten = std::string_view(batch_).substr(w.written);
            dropped_.fetch_add(uint64_t(std::count(unwritten.begin(), unwritten.end(), '\n')),
                               std::memory_order_relaxed);
        }
        const std::string note = outage_.after_write(sink_.target(), w.error, dropped_before);
        if (!note.empty()) (w.error ? log_error : log_info)("access log: " + note);
    }
    if (batch_.capacity() > kWakeBytes * 4) std::string().swap(batch_);
}

void AccessLog::flush() {
    std::lock_guard lock(flush_mutex_);
    write_out();
}

void AccessLog::run() {
    std::unique_lock lock(wake_mutex_);
    while (!stopping_) {
        wake_.wait_for(lock, std::chrono::milliseconds(flush_ms_.load(std::memory_order_relaxed)),
                       [this] { return wake_requested_ || stopping_; });
        wake_requested_ = false;
        lock.unlock();
        flush();
        lock.lock();
    }
}

void AccessLog::stop() {
    {
        std::lock_guard lock(wake_mutex_);
        if (stopping_ && !writer_.joinable()) return;
        stopping_ = true;
        wake_.notify_one();
    }
    if (writer_.joinable()) writer_.join();
    flush();
}

}  // namespace rivet::app
