// The figures behind GET /metrics (Prometheus text format 0.0.4) and GET /status.json, taken
// at one instant.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "app/operations/metrics.hpp"
#include "engine/loop_stats.hpp"

namespace rivet::app {

// What the App knows beyond Metrics: the engine's and the worker pool's own counters.
struct ServingStats {
    engine::ServerStats traffic;  // connections and bytes, summed over the loops
    uint64_t queue_depth = 0;
    unsigned workers = 0;
    unsigned loops = 0;
    bool has_cache = false;  // a static file cache exists
    uint64_t cache_hits = 0;
    uint64_t cache_misses = 0;
};

// One certificate the TLS listener serves: its file, and the end of its validity (the leaf's
// notAfter, seconds since the Unix epoch).
struct CertificateExpiry {
    std::string file;
    int64_t not_after_s = 0;
};

// How the last reload of the configuration went (SIGHUP). Before any: the start's, a success.
struct ReloadOutcome {
    enum class Result : uint8_t { Applied, Refused };
    Result result = Result::Applied;
    double time_s = 0;  // Unix time
};

// Whether the instance is on its way out: the lame duck (readiness fails, requests are still
// served), then the drain.
enum class Lifecycle : uint8_t { Serving, Leaving };

struct Snapshot {
    Metrics::Totals totals;
    std::vector<RouteLabel> routes;
    ServingStats serving;
    bool rate_limiting = false;
    uint64_t rate_limit_clients = 0;
    uint64_t rate_limit_capacity = 0;
    uint64_t access_log_dropped = 0;
    double start_time_s = 0;  // Unix time
    double uptime_s = 0;
    uint64_t rss_bytes = 0;
    double cpu_seconds = 0;
    uint64_t open_fds = 0;
    uint64_t max_fds = 0;  // RLIMIT_NOFILE's soft limit
    std::vector<CertificateExpiry> certificates;
    ReloadOutcome last_reload;
    Lifecycle lifecycle = Lifecycle::Serving;
};

// RSS, CPU time and file descriptors of this process.
void read_process_stats(Snapshot& s);

std::string prometheus_text(const Snapshot& s);
// What an operator asks of the instance beyond its traffic (instance_metrics.cpp): build info,
// the lifecycle, the last reload, certificate expiry, descriptors.
void instance_metrics(std::string& out, const Snapshot& s);
std::string status_json(const Snapshot& s);

}  // namespace rivet::app
