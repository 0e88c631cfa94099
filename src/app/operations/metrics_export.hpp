// The figures behind GET /metrics (Prometheus text format 0.0.4) and GET /status.json, taken
// at one instant.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

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
};

// RSS and CPU time of this process.
void read_process_stats(Snapshot& s);

std::string prometheus_text(const Snapshot& s);
std::string status_json(const Snapshot& s);

}  // namespace rivet::app
