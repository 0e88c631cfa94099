// bench/ws_load's echo and idle modes (ws_load.cpp describes them).
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "modes.hpp"

namespace wsload {

namespace {

constexpr uint32_t kWholeEvery = 64;  // every 64th echo is compared byte for byte

class Echo : public Handler {
public:
    Echo(const Options& o, Loop*& loop) : o_(o), loop_(loop), payload_(make_payload(o.size)) {}

    void on_open(Conn& c) override {
        prepare_frame(c, payload_, o_.binary);
        c.ring.assign(o_.depth, Sent{0, 0});
        if (o_.mode == "idle") send_one(c, now_ns());  // the one echo of an idle connection
    }

    bool collect(Conn& c) override {
        return c.ring_count > 0 && c.ring[c.ring_head].seq % kWholeEvery == 1;
    }

    void on_message(Conn& c, const Message& m) override {
        const uint64_t t = now_ns();
        if (c.ring_count == 0) {
            ++loop_->errors.verify;  // an echo of nothing sent
            return;
        }
        const Sent sent = c.ring[c.ring_head];
        c.ring_head = (c.ring_head + 1) % c.ring.size();
        --c.ring_count;
        check(c, m, sent.seq);
        ++total;
        ++c.done;
        if (t <= end_ns) {
            ++in_window;
            latencies.push_back(t - sent.t_ns);
        }
        if (sending && t < end_ns) send_one(c, t);
    }

    // Fills every open connection's pipeline.
    void start(uint64_t end) {
        end_ns = end;
        sending = true;
        const uint64_t t = now_ns();
        for (size_t i = 0; i < loop_->size(); ++i) {
            Conn& c = loop_->conn(i);
            if (c.state != Conn::State::Open) continue;
            while (c.ring_count < c.ring.size()) send_one(c, t);
        }
    }

    size_t in_flight() const {
        size_t n = 0;
        for (size_t i = 0; i < loop_->size(); ++i) {
            const Conn& c = loop_->conn(i);
            if (c.state == Conn::State::Open) n += c.ring_count;
        }
        return n;
    }

    uint64_t total = 0, in_window = 0, whole = 0;
    uint64_t end_ns = UINT64_MAX;
    bool sending = false;
    std::vector<uint64_t> latencies;

private:
    void send_one(Conn& c, uint64_t t) {
        const uint32_t seq = c.next_seq++;
        c.ring[(c.ring_head + c.ring_count) % c.ring.size()] = Sent{seq, t};
        ++c.ring_count;
        send_stamped(*loop_, c, seq, payload_.size());
    }

    void check(Conn& c, const Message& m, uint32_t seq) {
        char stamp[kStampLength];
        write_stamp(stamp, seq);
        const uint8_t want_op = o_.binary ? kBinary : kText;
        bool ok = m.opcode == want_op && m.length == payload_.size() &&
                  m.prefix.size() >= kStampLength &&
                  std::memcmp(m.prefix.data(), stamp, kStampLength) == 0;
        if (ok && c.collecting) {
            ok = m.body.size() == payload_.size() &&
                 std::memcmp(m.body.data() + kStampLength, payload_.data() + kStampLength,
                             payload_.size() - kStampLength) == 0;
            ++whole;
        }
        if (!ok) ++loop_->errors.verify;
    }

    const Options& o_;
    Loop*& loop_;
    std::string payload_;
};

void summary(const char* what) {
    std::fprintf(stderr, "ws_load: %s\n", what);
}

}  // namespace

int run_echo(const Options& o) {
    Loop* loop = nullptr;
    Echo echo(o, loop);
    Loop l(o.net, echo);
    loop = &l;
    l.add(o.connections);
    l.open_all(now_ns() + 120000000000ull);
    size_t deflated = 0;
    for (size_t i = 0; i < l.size(); ++i) deflated += l.conn(i).deflate ? 1 : 0;

    double user0 = 0, user1 = 0;
    const double cpu0 = proc_cpu_s(o.server_pid, &user0), self0 = self_cpu_s();
    const uint64_t t0 = now_ns();
    const uint64_t end = t0 + uint64_t(o.duration_s * 1e9);
    echo.start(end);
    l.run_until([] { return false; }, end);
    // The messages still in flight are answered before the server's CPU is read again: their
    // work belongs to the measured messages.
    echo.sending = false;
    l.run_until([&] { return echo.in_flight() == 0; }, now_ns() + 10000000000ull);
    const double window_s = double(end - t0) / 1e9;
    const double cpu = o.server_pid > 0 ? proc_cpu_s(o.server_pid, &user1) - cpu0 : -1;
    const double self = self_cpu_s() - self0;
    const size_t opened = l.open_count();
    l.close_all();

    std::string lat = latency_json(echo.latencies);
    std::printf(
        "{\"mode\": \"echo\", \"connections\": %zu, \"open\": %zu, \"deflate_negotiated\": %zu, "
        "\"size\": %zu, \"depth\": %zu, \"binary\": %s, \"duration_s\": %.3f, \"messages\": %llu, "
        "\"messages_total\": %llu, \"messages_per_s\": %.1f, \"verified_whole\": %llu, "
        "\"latency_us\": %s, \"errors\": %s, \"server_cpu_s\": %.3f, \"cpu_us_per_message\": %s, "
        "\"server_user_s\": %.3f, \"user_us_per_message\": %s, \"client_cpu_s\": %.3f}\n",
        o.connections, opened, deflated, o.size, o.depth, o.binary ? "true" : "false", window_s,
        (unsigned long long)echo.in_window, (unsigned long long)echo.total,
        double(echo.in_window) / window_s, (unsigned long long)echo.whole, lat.c_str(),
        errors_json(l.errors).c_str(), cpu,
        (cpu >= 0 && echo.total) ? std::to_string(cpu * 1e6 / double(echo.total)).c_str() : "null",
        cpu >= 0 ? user1 - user0 : -1.0,
        (cpu >= 0 && echo.total)
            ? std::to_string((user1 - user0) * 1e6 / double(echo.total)).c_str()
            : "null",
        self);
    char line[256];
    std::snprintf(line, sizeof line,
                  "%zu/%zu open, %.0f messages/s, %llu errors, client CPU %.0f%%", opened,
                  o.connections, double(echo.in_window) / window_s,
                  (unsigned long long)l.errors.total(), 100 * self / window_s);
    summary(line);
    return l.errors.total() == 0 && opened == o.connections ? 0 : 1;
}

int run_idle(const Options& o) {
    Options idle = o;
    idle.mode = "idle";
    long before = -1;
    if (o.server_pid > 0) {
        // Warm-up: the allocator's arenas and the server's pools, as in tls_idle_memory.py.
        Loop* wl = nullptr;
        Echo warm(idle, wl);
        Loop w(o.net, warm);
        wl = &w;
        w.add(std::min<size_t>(200, o.connections));
        w.open_all(now_ns() + 60000000000ull);
        w.run_until([&] { return warm.total >= w.open_count(); }, now_ns() + 30000000000ull);
        w.close_all();
        usleep(500000);
        before = proc_rss_kib(o.server_pid);
    }
    Loop* loop = nullptr;
    Echo echo(idle, loop);
    Loop l(o.net, echo);
    loop = &l;
    l.add(o.connections);
    l.open_all(now_ns() + 120000000000ull);
    l.run_until([&] { return echo.total >= l.open_count(); }, now_ns() + 60000000000ull);
    l.run_until([] { return false; }, now_ns() + 500000000ull);  // settle (and answer pings)
    const long after = o.server_pid > 0 ? proc_rss_kib(o.server_pid) : -1;
    const size_t opened = l.open_count();
    std::printf(
        "{\"mode\": \"idle\", \"connections\": %zu, \"open\": %zu, \"echoed\": %llu, "
        "\"rss_before_kib\": %ld, \"rss_after_kib\": %ld, \"bytes_per_connection\": %s, "
        "\"errors\": %s}\n",
        o.connections, opened, (unsigned long long)echo.total, before, after,
        (before >= 0 && opened)
            ? std::to_string(double(after - before) * 1024 / double(opened)).c_str()
            : "null",
        errors_json(l.errors).c_str());
    std::fflush(stdout);
    if (o.hold_s > 0) l.run_until([] { return false; }, now_ns() + uint64_t(o.hold_s * 1e9));
    summary((std::to_string(opened) + " idle connections held").c_str());
    return l.errors.total() == 0 && opened == o.connections && echo.total == opened ? 0 : 1;
}

}  // namespace wsload
