// bench/ws_load's modes (ws_load.cpp describes them) and what they share: the payload and its
// stamp, the server's CPU and memory from /proc, latency percentiles, the JSON line.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "loop.hpp"

namespace wsload {

struct Options {
    Settings net;
    std::string mode = "echo";
    size_t connections = 100;
    size_t size = 32;
    size_t depth = 1;
    double duration_s = 3;
    bool binary = false;
    int server_pid = 0;
    double hold_s = 0;
    size_t messages = 100;
    size_t window = 32;
};

int run_echo(const Options& o);
int run_idle(const Options& o);
int run_subscribe(const Options& o);

// The stamp at the start of every payload: '#' and the sequence number in 8 hex digits.
constexpr size_t kStampLength = 9;
void write_stamp(char out[kStampLength], uint32_t seq);
// The sequence number of the first stamp found in `text`; false when none.
bool find_stamp(std::string_view text, uint32_t& seq);
// `size` printable bytes (valid UTF-8 for text messages, compressible a little), stamped 0.
std::string make_payload(size_t size);

// Prepares c's frame: the payload masked with a random key of c's own.
void prepare_frame(Conn& c, const std::string& payload, bool binary);
// Stamps c's frame with seq (re-masking only the stamp) and sends it.
void send_stamped(Loop& loop, Conn& c, uint32_t seq, size_t payload_size);

// utime+stime of a process in seconds (-1 without one), and utime alone into *user_s (the
// server's own code, against the kernel's share); VmRSS in KiB.
double proc_cpu_s(int pid, double* user_s = nullptr);
long proc_rss_kib(int pid);
double self_cpu_s();

// p50, p90, p99, p99.9 and max of latencies in ns, as µs, a JSON object.
std::string latency_json(std::vector<uint64_t>& ns);
std::string errors_json(const Errors& e);

}  // namespace wsload
