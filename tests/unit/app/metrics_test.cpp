#include "app/metrics.hpp"

#include <gtest/gtest.h>

#include "app/metrics_export.hpp"

using namespace rivet::app;

TEST(Metrics, PerLoopCountsAreSummed) {
    Metrics m(2, {{"GET", "/a"}, {"POST", "/b"}});
    m.record(0, 0, 200, 10);
    m.record(1, 0, 204, 30);
    m.record(1, 1, 404, 3000);
    m.record_shared(1, 503, 2'000'000);
    m.count_rate_limited(0);
    m.count_pool_rejected();
    m.count_handler_exception(1);
    m.count_handler_exception(~0u);  // from a worker
    auto t = m.totals();
    EXPECT_EQ(t.by_route[0][1], 2u);
    EXPECT_EQ(t.by_route[1][3], 1u);
    EXPECT_EQ(t.by_route[1][4], 1u);
    EXPECT_EQ(t.requests, 4u);
    EXPECT_EQ(t.latency[0], 1u);  // <= 25 µs
    EXPECT_EQ(t.latency[1], 1u);  // <= 50 µs
    EXPECT_EQ(t.latency_sum_us, 2'003'040u);
    EXPECT_EQ(t.rate_limited, 1u);
    EXPECT_EQ(t.pool_rejected, 1u);
    EXPECT_EQ(t.handler_exceptions, 2u);

    Snapshot s;
    s.totals = t;
    s.routes = m.routes();
    std::string text = prometheus_text(s);
    EXPECT_NE(text.find("rivet_http_requests_total{method=\"GET\",route=\"/a\",code=\"2xx\"} 2\n"),
              std::string::npos);
    EXPECT_NE(text.find("rivet_http_request_duration_seconds_bucket{le=\"+Inf\"} 4\n"),
              std::string::npos);
    EXPECT_NE(text.find("rivet_http_request_duration_seconds_count 4\n"), std::string::npos);
    EXPECT_NE(text.find("rivet_handler_exceptions_total 2\n"), std::string::npos);
}
