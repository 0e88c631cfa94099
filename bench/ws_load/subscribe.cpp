// bench/ws_load's subscribe mode: N subscribers and one publisher on a chat-like route (every
// message a client sends is published to every client); ws_load.cpp describes it.
#include <cstdio>
#include <string>

#include "modes.hpp"

namespace wsload {

namespace {

class Fanout : public Handler {
public:
    Fanout(const Options& o, Loop*& loop)
        : o_(o),
          loop_(loop),
          payload_(make_payload(o.size)),
          delivered_(o.messages + 1, 0),
          sent_at_(o.messages + 1, 0) {}

    void on_open(Conn& c) override {
        if (c.index == publisher()) prepare_frame(c, payload_, o_.binary);
    }
    bool collect(Conn&) override { return true; }  // the stamp may be anywhere in the message

    void on_message(Conn& c, const Message& m) override {
        if (c.index == publisher()) return;  // its own messages, where the route echoes them
        uint32_t seq = 0;
        if (!find_stamp(m.body, seq)) {
            ++unstamped;  // the route's own messages (a greeting, a presence notice): not ours
            return;
        }
        if (seq > o_.messages) {
            ++loop_->errors.verify;
            return;
        }
        if (seq == 0) {  // the probe: this subscriber is subscribed
            if (c.done == 0) {
                c.done = 1;
                ++probed;
            }
            return;
        }
        if (seq <= c.last_seq) {
            ++loop_->errors.verify;  // a duplicate, or out of order
            return;
        }
        c.last_seq = seq;
        ++deliveries;
        last_delivery_ns = now_ns();
        latencies.push_back(last_delivery_ns - sent_at_[seq]);
        if (++delivered_[seq] == subscribers()) pump();
    }

    void send_probe() { send_stamped(*loop_, loop_->conn(publisher()), 0, payload_.size()); }

    // Sends what the window allows: message k once every subscriber has all of 1..k-window.
    void pump() {
        while (complete_ < next_ - 1 && delivered_[complete_ + 1] == subscribers()) ++complete_;
        Conn& pub = loop_->conn(publisher());
        while (next_ <= o_.messages && next_ <= complete_ + o_.window &&
               pub.state == Conn::State::Open) {
            sent_at_[next_] = now_ns();
            send_stamped(*loop_, pub, uint32_t(next_), payload_.size());
            ++next_;
        }
    }

    bool all_delivered() const { return deliveries == uint64_t(o_.messages) * subscribers(); }
    size_t publisher() const { return o_.connections; }
    size_t subscribers() const { return o_.connections; }

    uint64_t deliveries = 0;
    uint64_t unstamped = 0;
    uint64_t last_delivery_ns = 0;
    size_t probed = 0;
    std::vector<uint64_t> latencies;

private:
    const Options& o_;
    Loop*& loop_;
    std::string payload_;
    std::vector<uint32_t> delivered_;  // per message: subscribers that have it
    std::vector<uint64_t> sent_at_;
    size_t next_ = 1;
    size_t complete_ = 0;
};

}  // namespace

int run_subscribe(const Options& o) {
    Loop* loop = nullptr;
    Fanout fan(o, loop);
    Loop l(o.net, fan);
    loop = &l;
    l.add(o.connections + 1);  // the subscribers, then the publisher
    l.open_all(now_ns() + 120000000000ull);
    const bool ready = l.open_count() == l.size();
    // The probe (stamp 0) until every subscriber has seen one: subscriptions are in place.
    for (int tries = 0; ready && tries < 20 && fan.probed < o.connections; ++tries) {
        fan.send_probe();
        l.run_until([&] { return fan.probed == o.connections; }, now_ns() + 1000000000ull);
    }
    const double cpu0 = proc_cpu_s(o.server_pid), self0 = self_cpu_s();
    const uint64_t t0 = now_ns();
    if (fan.probed == o.connections) {
        fan.pump();
        l.run_until([&] { return fan.all_delivered(); }, t0 + uint64_t(o.duration_s * 1e9));
    }
    const double cpu = o.server_pid > 0 ? proc_cpu_s(o.server_pid) - cpu0 : -1;
    const double self = self_cpu_s() - self0;
    const double span_s = fan.deliveries ? double(fan.last_delivery_ns - t0) / 1e9 : 0;
    const uint64_t expected = uint64_t(o.messages) * o.connections;
    const size_t opened = l.open_count();
    l.close_all();
    std::string lat = latency_json(fan.latencies);
    std::printf(
        "{\"mode\": \"subscribe\", \"connections\": %zu, \"open\": %zu, \"subscribed\": %zu, "
        "\"messages\": %zu, \"size\": %zu, \"deliveries\": %llu, \"expected\": %llu, "
        "\"unstamped\": %llu, \"duration_s\": %.3f, \"deliveries_per_s\": %.1f, \"latency_us\": "
        "%s, \"errors\": %s, "
        "\"server_cpu_s\": %.3f, \"cpu_us_per_delivery\": %s, \"client_cpu_s\": %.3f}\n",
        o.connections, opened, fan.probed, o.messages, o.size, (unsigned long long)fan.deliveries,
        (unsigned long long)expected, (unsigned long long)fan.unstamped, span_s,
        span_s > 0 ? double(fan.deliveries) / span_s : 0.0, lat.c_str(),
        errors_json(l.errors).c_str(), cpu,
        (cpu >= 0 && fan.deliveries) ? std::to_string(cpu * 1e6 / double(fan.deliveries)).c_str()
                                     : "null",
        self);
    std::fprintf(stderr, "ws_load: %zu subscribers, %llu of %llu deliveries, %.0f per second\n",
                 fan.probed, (unsigned long long)fan.deliveries, (unsigned long long)expected,
                 span_s > 0 ? double(fan.deliveries) / span_s : 0.0);
    return fan.deliveries == expected && l.errors.total() == 0 ? 0 : 1;
}

}  // namespace wsload
