// What bench/ws_load's modes share (modes.hpp).
#include <openssl/rand.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "modes.hpp"

namespace wsload {

void write_stamp(char out[kStampLength], uint32_t seq) {
    static const char hex[] = "0123456789abcdef";
    out[0] = '#';
    for (int i = 0; i < 8; ++i) out[1 + i] = hex[(seq >> (28 - 4 * i)) & 0xF];
}

bool find_stamp(std::string_view text, uint32_t& seq) {
    for (size_t at = text.find('#'); at != std::string_view::npos; at = text.find('#', at + 1)) {
        if (at + kStampLength > text.size()) return false;
        uint32_t v = 0;
        bool ok = true;
        for (size_t i = 1; i < kStampLength && ok; ++i) {
            char ch = text[at + i];
            if (ch >= '0' && ch <= '9')
                v = (v << 4) | uint32_t(ch - '0');
            else if (ch >= 'a' && ch <= 'f')
                v = (v << 4) | uint32_t(ch - 'a' + 10);
            else
                ok = false;
        }
        if (ok) {
            seq = v;
            return true;
        }
    }
    return false;
}

std::string make_payload(size_t size) {
    std::string p(size, ' ');
    // Printable, no '#' (so the stamp is the only one), a line of 64 repeating with a drift.
    for (size_t i = 0; i < size; ++i) {
        char ch = char(36 + (i * 31 + i / 64) % 90);
        p[i] = (i % 64 == 63) ? '\n' : ch;
    }
    write_stamp(p.data(), 0);
    return p;
}

void prepare_frame(Conn& c, const std::string& payload, bool binary) {
    RAND_bytes(c.mask, sizeof c.mask);
    c.frame = masked_frame(binary ? kBinary : kText, payload, c.mask);
}

void send_stamped(Loop& loop, Conn& c, uint32_t seq, size_t payload_size) {
    char stamp[kStampLength];
    write_stamp(stamp, seq);
    const size_t at = c.frame.size() - payload_size;
    for (size_t i = 0; i < kStampLength; ++i) c.frame[at + i] = char(stamp[i] ^ c.mask[i & 3]);
    loop.send(c, c.frame);
}

double proc_cpu_s(int pid, double* user_s) {
    if (user_s) *user_s = -1;
    if (pid <= 0) return -1;
    std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
    std::string data((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    size_t close = data.rfind(')');
    if (close == std::string::npos) return -1;
    std::istringstream rest(data.substr(close + 2));
    std::string field;
    unsigned long long utime = 0, stime = 0;
    for (int i = 0; i < 13 && rest >> field; ++i) {
        if (i == 11) utime = std::stoull(field);
        if (i == 12) stime = std::stoull(field);
    }
    const double tck = double(sysconf(_SC_CLK_TCK));
    if (user_s) *user_s = double(utime) / tck;
    return double(utime + stime) / tck;
}

long proc_rss_kib(int pid) {
    std::ifstream f("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(f, line)) {
        if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
    }
    return -1;
}

double self_cpu_s() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

std::string latency_json(std::vector<uint64_t>& ns) {
    if (ns.empty()) return "null";
    std::sort(ns.begin(), ns.end());
    auto at = [&](double q) {
        size_t i = std::min(ns.size() - 1, size_t(q * double(ns.size())));
        return double(ns[i]) / 1000.0;
    };
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "{\"p50\": %.1f, \"p90\": %.1f, \"p99\": %.1f, \"p999\": %.1f, \"max\": %.1f}",
                  at(0.5), at(0.9), at(0.99), at(0.999), double(ns.back()) / 1000.0);
    return buf;
}

std::string errors_json(const Errors& e) {
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "{\"connect\": %llu, \"handshake\": %llu, \"protocol\": %llu, \"closed\": "
                  "%llu, \"verify\": %llu}",
                  (unsigned long long)e.connect, (unsigned long long)e.handshake,
                  (unsigned long long)e.protocol, (unsigned long long)e.closed,
                  (unsigned long long)e.verify);
    return buf;
}

}  // namespace wsload
