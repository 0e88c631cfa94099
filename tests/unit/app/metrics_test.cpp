#include "app/operations/metrics.hpp"

#include <gtest/gtest.h>

#include <rivet/version.hpp>

#include "app/operations/metrics_export.hpp"

using namespace rivet::app;

TEST(Metrics, PerLoopCountsAreSummed) {
    Metrics m(2, {{"GET", "/a"}, {"POST", "/b"}});
    m.record(0, 0, Metrics::Http11, rivet::Method::Get, 200, 10);
    m.record(1, 0, Metrics::Http11, rivet::Method::Get, 204, 30);
    m.record(1, 1, Metrics::Http11, rivet::Method::Post, 404, 3000);
    m.record_shared(1, Metrics::Http11, rivet::Method::Post, 503, 2'000'000);
    m.count_rate_limited(0);
    m.count_pool_rejected();
    m.count_handler_exception(1);
    m.count_handler_exception(~0u);  // from a worker
    auto t = m.totals();
    EXPECT_EQ(t.by_route[0][Metrics::Http11][1], 2u);
    EXPECT_EQ(t.by_route[1][Metrics::Http11][3], 1u);
    EXPECT_EQ(t.by_route[1][Metrics::Http11][4], 1u);
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
    EXPECT_NE(text.find("rivet_http_requests_total{method=\"GET\",route=\"/a\",protocol=\"1.1\","
                        "code=\"2xx\"} 2\n"),
              std::string::npos);
    const std::string a = "{method=\"GET\",route=\"/a\",code=\"2xx\"";
    const std::string b = "{method=\"POST\",route=\"/b\",code=\"5xx\"";
    const std::string h = "rivet_http_request_duration_seconds";
    for (std::string want :
         {h + "_bucket" + a + ",le=\"2.5e-05\"} 1\n", h + "_bucket" + a + ",le=\"5e-05\"} 2\n",
          h + "_bucket" + a + ",le=\"+Inf\"} 2\n", h + "_count" + a + "} 2\n",
          h + "_sum" + a + "} 0.000040\n", h + "_bucket" + b + ",le=\"1\"} 0\n",
          h + "_bucket" + b + ",le=\"2.5\"} 1\n", h + "_count" + b + "} 1\n"})
        EXPECT_NE(text.find(want), std::string::npos) << want;
    // A series not seen (GET /b, POST /a ...) is left out.
    EXPECT_EQ(text.find(h + "_count{method=\"POST\",route=\"/a\""), std::string::npos);
    EXPECT_EQ(text.find(h + "_count{method=\"GET\",route=\"/b\""), std::string::npos);
    EXPECT_NE(text.find("rivet_handler_exceptions_total 2\n"), std::string::npos);
}

// The durations' labels are bounded whatever the requests say: route ids from the table, known
// methods or OTHER, five classes; a route id past the table is counted nowhere.
TEST(Metrics, DurationLabelsAreBounded) {
    Metrics m(1, {{"GET", "/a"}});
    m.record(0, 0, Metrics::Http11, rivet::Method::Other, 299, 10);
    m.record(0, 0, Metrics::Http11, rivet::Method(200), 700, 10);   // out of range: OTHER, 5xx
    m.record(0, 0, Metrics::Http11, rivet::Method::Patch, 99, 10);  // below 1xx: 1xx
    m.record(0, 7, Metrics::Http11, rivet::Method::Get, 200, 10);   // no such route
    auto t = m.totals();
    EXPECT_EQ(t.durations.size(), Metrics::kMethods * Metrics::kClasses);
    EXPECT_EQ(t.requests, 3u);
    auto count = [&](rivet::Method method, size_t status_class) {
        uint64_t n = 0;
        for (uint64_t c : t.durations[Metrics::series_of(0, method, status_class)].counts) n += c;
        return n;
    };
    EXPECT_EQ(count(rivet::Method::Other, 1), 1u);
    EXPECT_EQ(count(rivet::Method::Other, 4), 1u);
    EXPECT_EQ(count(rivet::Method::Patch, 0), 1u);
    Snapshot s;
    s.totals = t;
    s.routes = m.routes();
    std::string text = prometheus_text(s);
    EXPECT_NE(text.find("_count{method=\"OTHER\",route=\"/a\",code=\"5xx\"} 1\n"),
              std::string::npos);
}

TEST(Metrics, RequestsByProtocolVersion) {
    EXPECT_EQ(Metrics::protocol_of(1, 0), Metrics::Http10);
    EXPECT_EQ(Metrics::protocol_of(1, 1), Metrics::Http11);
    EXPECT_EQ(Metrics::protocol_of(2, 0), Metrics::Http2);
    Metrics m(1, {{"GET", "/a"}, {"GET", "/b"}});
    m.record(0, 0, Metrics::Http2, rivet::Method::Get, 200, 10);
    m.record(0, 0, Metrics::Http2, rivet::Method::Get, 201, 10);
    m.record(0, 0, Metrics::Http10, rivet::Method::Get, 404, 10);
    m.record_shared(0, Metrics::Http2, rivet::Method::Get, 500, 10);  // from a worker
    auto t = m.totals();
    EXPECT_EQ(t.by_route[0][Metrics::Http2][1], 2u);
    EXPECT_EQ(t.by_route[0][Metrics::Http2][4], 1u);
    EXPECT_EQ(t.by_route[0][Metrics::Http10][3], 1u);
    EXPECT_EQ(t.by_route[0][Metrics::Http11][1], 0u);
    EXPECT_EQ(t.requests, 4u);

    Snapshot s;
    s.totals = t;
    s.routes = m.routes();
    std::string text = prometheus_text(s);
    const std::string a = "rivet_http_requests_total{method=\"GET\",route=\"/a\",protocol=";
    for (std::string want : {a + "\"2\",code=\"2xx\"} 2\n", a + "\"2\",code=\"5xx\"} 1\n",
                             a + "\"1.0\",code=\"4xx\"} 1\n", a + "\"1.1\",code=\"2xx\"} 0\n"})
        EXPECT_NE(text.find(want), std::string::npos) << want;
    // Series of a protocol not seen are left out, but for 1.1's 2xx (every route from the start).
    EXPECT_EQ(text.find(a + "\"2\",code=\"4xx\"}"), std::string::npos);
    EXPECT_EQ(text.find("route=\"/b\",protocol=\"2\""), std::string::npos);
    EXPECT_NE(text.find("route=\"/b\",protocol=\"1.1\",code=\"2xx\"} 0\n"), std::string::npos);
    EXPECT_NE(status_json(s).find("\"status\":{\"1xx\":0,\"2xx\":2,\"3xx\":0,\"4xx\":1,\"5xx\":1}"),
              std::string::npos)
        << status_json(s);
}

TEST(Http2Metrics, EverySeriesWithItsLabels) {
    Snapshot s;
    auto& h = s.serving.traffic.http2;
    h.connections = 3;
    h.streams = 40;
    h.streams_closed = 33;
    h.stalls = 2;
    h.goaways_sent[rivet::engine::http2_error_kind(0x0)] = 5;
    h.goaways_sent[rivet::engine::http2_error_kind(0xb)] = 4;
    h.goaways_received[rivet::engine::http2_error_kind(0x1)] = 6;
    h.goaways_received[rivet::engine::http2_error_kind(0x77)] = 1;  // no code of RFC 9113's
    for (size_t i = 0; i < rivet::engine::kHttp2AbuseKinds; ++i) h.abuse[i] = 10 + i;
    std::string text = prometheus_text(s);
    for (const char* want : {
             "# TYPE rivet_http2_connections_total counter\n",
             "rivet_http2_connections_total 3\n",
             "# TYPE rivet_http2_streams_total counter\n",
             "rivet_http2_streams_total 40\n",
             "# HELP rivet_http2_streams_open ",
             "# TYPE rivet_http2_streams_open gauge\n",
             "rivet_http2_streams_open 7\n",
             "# TYPE rivet_http2_goaways_sent_total counter\n",
             "rivet_http2_goaways_sent_total{code=\"NO_ERROR\"} 5\n",
             "rivet_http2_goaways_sent_total{code=\"ENHANCE_YOUR_CALM\"} 4\n",
             "# TYPE rivet_http2_goaways_received_total counter\n",
             "rivet_http2_goaways_received_total{code=\"NO_ERROR\"} 0\n",
             "rivet_http2_goaways_received_total{code=\"PROTOCOL_ERROR\"} 6\n",
             "rivet_http2_goaways_received_total{code=\"other\"} 1\n",
             "# TYPE rivet_http2_flow_control_stalls_total counter\n",
             "rivet_http2_flow_control_stalls_total 2\n",
             "# TYPE rivet_http2_abuse_total counter\n",
             "rivet_http2_abuse_total{kind=\"rapid_reset\"} 10\n",
             "rivet_http2_abuse_total{kind=\"continuation\"} 11\n",
             "rivet_http2_abuse_total{kind=\"settings\"} 12\n",
             "rivet_http2_abuse_total{kind=\"ping\"} 13\n",
             "rivet_http2_abuse_total{kind=\"priority\"} 14\n",
             "rivet_http2_abuse_total{kind=\"empty_data\"} 15\n",
             "rivet_http2_abuse_total{kind=\"hpack\"} 16\n",
         })
        EXPECT_NE(text.find(want), std::string::npos) << want;
    // Codes never seen are left out (but NO_ERROR).
    EXPECT_EQ(text.find("rivet_http2_goaways_sent_total{code=\"PROTOCOL_ERROR\"}"),
              std::string::npos);
    EXPECT_NE(status_json(s).find("\"http2\":{\"connections\":3,"), std::string::npos)
        << status_json(s);

    // A stream opened and closed between the loop's two reads: no wrap to 2^64 - 1.
    h.streams_closed = h.streams + 1;
    EXPECT_NE(prometheus_text(s).find("rivet_http2_streams_open 0\n"), std::string::npos);
}

TEST(Http2Metrics, ZerosWithHttp2Off) {  // the same series whatever the configuration
    std::string text = prometheus_text(Snapshot{});
    for (const char* want : {"rivet_http2_connections_total 0\n", "rivet_http2_streams_open 0\n",
                             "rivet_http2_goaways_sent_total{code=\"NO_ERROR\"} 0\n",
                             "rivet_http2_abuse_total{kind=\"hpack\"} 0\n"})
        EXPECT_NE(text.find(want), std::string::npos) << want;
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

TEST(InstanceMetrics, BuildLifecycleReloadCertificatesDescriptors) {
    Snapshot s;
    read_process_stats(s);
    EXPECT_GE(s.open_fds, 3u);  // stdin, stdout, stderr at least
    EXPECT_GE(s.max_fds, s.open_fds);
    s.lifecycle = Lifecycle::Leaving;
    s.last_reload = {ReloadOutcome::Result::Refused, 1700000000.5};
    s.certificates = {{"/etc/a.pem", 1800000000}, {"b\"c.pem", 1900000000}};
    std::string text = prometheus_text(s);
    for (std::string want :
         {std::string("rivet_build_info{version=\"") + RIVET_VERSION_STRING + "\",compiler=\"",
          std::string("rivet_draining 1\n"), std::string("rivet_config_last_reload_successful 0\n"),
          std::string("rivet_config_last_reload_timestamp_seconds 1700000000.500000\n"),
          std::string("rivet_tls_certificate_expiry_timestamp_seconds{file=\"/etc/a.pem\"} "
                      "1800000000\n"),
          std::string("rivet_tls_certificate_expiry_timestamp_seconds{file=\"b\\\"c.pem\"} "
                      "1900000000\n"),
          "process_open_fds " + std::to_string(s.open_fds) + "\n",
          "process_max_fds " + std::to_string(s.max_fds) + "\n",
          std::string("# TYPE rivet_http_requests_in_flight gauge\n")})
        EXPECT_NE(text.find(want), std::string::npos) << want;
    s.lifecycle = Lifecycle::Serving;
    s.last_reload.result = ReloadOutcome::Result::Applied;
    text = prometheus_text(s);
    EXPECT_NE(text.find("rivet_draining 0\n"), std::string::npos);
    EXPECT_NE(text.find("rivet_config_last_reload_successful 1\n"), std::string::npos);
}
