#include "app/operations/metrics.hpp"

#include <gtest/gtest.h>

#include "app/operations/metrics_export.hpp"

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

TEST(TlsMetrics, HandshakesAndFailuresByLabel) {
    Snapshot s;
    auto& t = s.serving.traffic;
    t.tls_handshakes = {11, 13, 21, 23};  // full 1.2, full 1.3, resumed 1.2, resumed 1.3
    for (size_t i = 0; i < rivet::engine::kTlsFailureKinds; ++i) t.tls_failures[i] = 100 + i;
    std::string text = prometheus_text(s);
    for (const char* want : {"# TYPE rivet_tls_handshakes_total counter\n",
                             "rivet_tls_handshakes_total{version=\"1.2\",kind=\"full\"} 11\n",
                             "rivet_tls_handshakes_total{version=\"1.3\",kind=\"full\"} 13\n",
                             "rivet_tls_handshakes_total{version=\"1.2\",kind=\"resumed\"} 21\n",
                             "rivet_tls_handshakes_total{version=\"1.3\",kind=\"resumed\"} 23\n",
                             "# TYPE rivet_tls_handshake_failures_total counter\n",
                             "rivet_tls_handshake_failures_total{reason=\"plain_http\"} 100\n",
                             "rivet_tls_handshake_failures_total{reason=\"timeout\"} 101\n",
                             "rivet_tls_handshake_failures_total{reason=\"peer_closed\"} 102\n",
                             "rivet_tls_handshake_failures_total{reason=\"no_common\"} 103\n",
                             "rivet_tls_handshake_failures_total{reason=\"peer_alert\"} 104\n",
                             "rivet_tls_handshake_failures_total{reason=\"malformed\"} 105\n"})
        EXPECT_NE(text.find(want), std::string::npos) << want;
    std::string json = status_json(s);
    EXPECT_NE(json.find("\"resumed_tls13\":23"), std::string::npos) << json;
    EXPECT_NE(json.find("\"no_common\":103"), std::string::npos) << json;
}

TEST(TlsMetrics, ZerosWithTlsOff) {  // the same series whatever the configuration
    std::string text = prometheus_text(Snapshot{});
    EXPECT_NE(text.find("rivet_tls_handshakes_total{version=\"1.3\",kind=\"resumed\"} 0\n"),
              std::string::npos);
    EXPECT_NE(text.find("rivet_tls_handshake_failures_total{reason=\"timeout\"} 0\n"),
              std::string::npos);
}
