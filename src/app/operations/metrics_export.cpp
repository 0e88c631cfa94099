#include "app/operations/metrics_export.hpp"

#include <cstdio>

#include <nlohmann/json.hpp>

#include "app/operations/metrics_text.hpp"
#include "app/session/session_engine.hpp"

namespace rivet::app {

using namespace metrics_text;

namespace {

std::string seconds_label(uint64_t us) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", double(us) / 1e6);
    return buf;
}

// The engine's handshake counters. Emitted with TLS off too (all zero): scrapers and
// dashboards see the same series whatever the configuration.
void tls_metrics(std::string& out, const engine::ServerStats& t) {
    line(out, "# HELP rivet_tls_handshakes_total TLS handshakes finished, by version and kind.");
    line(out, "# TYPE rivet_tls_handshakes_total counter");
    const auto& h = t.tls_handshakes;
    sample(out, "rivet_tls_handshakes_total{version=\"1.2\",kind=\"full\"}", h.full_tls12);
    sample(out, "rivet_tls_handshakes_total{version=\"1.2\",kind=\"resumed\"}", h.resumed_tls12);
    sample(out, "rivet_tls_handshakes_total{version=\"1.3\",kind=\"full\"}", h.full_tls13);
    sample(out, "rivet_tls_handshakes_total{version=\"1.3\",kind=\"resumed\"}", h.resumed_tls13);
    line(out,
         "# HELP rivet_tls_handshake_failures_total TLS handshakes that did not finish, by "
         "reason.");
    line(out, "# TYPE rivet_tls_handshake_failures_total counter");
    for (size_t i = 0; i < engine::kTlsFailureKinds; ++i)
        sample(out,
               std::string("rivet_tls_handshake_failures_total{reason=\"") +
                   engine::tls_failure_name(engine::TlsFailure(i)) + "\"}",
               t.tls_failures[i]);
}

// One histogram per route, method and status class seen (an unseen one has no quantile to
// show); the bucket bounds' text is made once per scrape, not per series.
void durations(std::string& out, const Snapshot& s) {
    const char* name = "rivet_http_request_duration_seconds";
    family(out, name, "histogram",
           "From the handler's start to the answer, by route pattern, method and status class.");
    std::array<std::string, Metrics::kBuckets> le;
    for (size_t i = 0; i < Metrics::kBuckets; ++i)
        le[i] = i < std::size(Metrics::kBoundsUs) ? seconds_label(Metrics::kBoundsUs[i]) : "+Inf";
    const auto& t = s.totals;
    for (uint32_t r = 0; r < s.routes.size(); ++r)
        for (size_t m = 0; m < Metrics::kMethods; ++m)
            for (size_t c = 0; c < Metrics::kClasses; ++c) {
                const auto& h = t.durations[Metrics::series_of(r, Method(m), c)];
                uint64_t count = 0;
                for (uint64_t n : h.counts) count += n;
                if (count == 0) continue;
                std::string labels = "{method=\"" + std::string(method_name(Method(m))) +
                                     "\",route=\"" + label(s.routes[r].route) + "\",code=\"" +
                                     Metrics::class_name(c) + "\"";
                uint64_t cumulative = 0;
                for (size_t i = 0; i < Metrics::kBuckets; ++i) {
                    cumulative += h.counts[i];
                    sample(out, std::string(name) + "_bucket" + labels + ",le=\"" + le[i] + "\"}",
                           cumulative);
                }
                sample(out, std::string(name) + "_sum" + labels + "}", double(h.sum_us) / 1e6);
                sample(out, std::string(name) + "_count" + labels + "}", count);
            }
}

// The two counters are read one after the other while the loop runs: a stream opened and
// closed between the reads must not make the difference wrap.
uint64_t http2_streams_open(const engine::Http2Stats& h) {
    return h.streams > h.streams_closed ? h.streams - h.streams_closed : 0;
}

// The engine's HTTP/2 counters, emitted with HTTP/2 off too (zero), as the TLS ones are.
void http2_metrics(std::string& out, const engine::Http2Stats& h) {
    family(out, "rivet_http2_connections_total", "counter",
           "HTTP/2 connections (ALPN h2, or h2c by prior knowledge).");
    sample(out, "rivet_http2_connections_total", h.connections);
    family(out, "rivet_http2_streams_total", "counter", "HTTP/2 streams opened by clients.");
    sample(out, "rivet_http2_streams_total", h.streams);
    family(out, "rivet_http2_streams_open", "gauge", "HTTP/2 streams open now.");
    sample(out, "rivet_http2_streams_open", http2_streams_open(h));
    // By error code: NO_ERROR (the graceful ones) always, the others once seen.
    auto by_code = [&](const char* name, const char* help, const auto& counts) {
        family(out, name, "counter", help);
        for (size_t i = 0; i < engine::kHttp2ErrorKinds; ++i)
            if (counts[i] != 0 || i == 0)
                sample(out,
                       std::string(name) + "{code=\"" + std::string(engine::http2_error_label(i)) +
                           "\"}",
                       counts[i]);
    };
    by_code("rivet_http2_goaways_sent_total", "HTTP/2 GOAWAY frames sent, by error code.",
            h.goaways_sent);
    by_code("rivet_http2_goaways_received_total", "HTTP/2 GOAWAY frames received, by error code.",
            h.goaways_received);
    family(out, "rivet_http2_flow_control_stalls_total", "counter",
           "HTTP/2 streams reset because the client held their window at zero past the write "
           "timeout.");
    sample(out, "rivet_http2_flow_control_stalls_total", h.stalls);
    family(out, "rivet_http2_abuse_total", "counter",
           "HTTP/2 connections closed with GOAWAY ENHANCE_YOUR_CALM, by kind of abuse.");
    for (size_t i = 0; i < engine::kHttp2AbuseKinds; ++i)
        sample(out,
               "rivet_http2_abuse_total{kind=\"" +
                   std::string(engine::http2_abuse_label(engine::Http2Abuse(i))) + "\"}",
               h.abuse[i]);
}

}  // namespace

void websocket_metrics(std::string& out, const engine::WebSocketStats& w) {
    line(out, "# HELP rivet_websocket_connections_open WebSocket connections open now.");
    line(out, "# TYPE rivet_websocket_connections_open gauge");
    sample(out, "rivet_websocket_connections_open", w.opened - w.closed);
    line(out, "# HELP rivet_websocket_connections_total WebSocket connections opened (101 sent).");
    line(out, "# TYPE rivet_websocket_connections_total counter");
    sample(out, "rivet_websocket_connections_total", w.opened);
    line(out, "# HELP rivet_websocket_messages_total WebSocket data messages, by direction.");
    line(out, "# TYPE rivet_websocket_messages_total counter");
    sample(out, "rivet_websocket_messages_total{direction=\"in\"}", w.messages_in);
    sample(out, "rivet_websocket_messages_total{direction=\"out\"}", w.messages_out);
    line(out,
         "# HELP rivet_websocket_message_bytes_total WebSocket data message payload bytes, by "
         "direction (before compression, after inflating).");
    line(out, "# TYPE rivet_websocket_message_bytes_total counter");
    sample(out, "rivet_websocket_message_bytes_total{direction=\"in\"}", w.bytes_in);
    sample(out, "rivet_websocket_message_bytes_total{direction=\"out\"}", w.bytes_out);
    line(out,
         "# HELP rivet_websocket_closes_total WebSocket connections ended, by close code (the "
         "client's, or ours when we failed the connection; 1006: no close frame).");
    line(out, "# TYPE rivet_websocket_closes_total counter");
    for (size_t i = 0; i < engine::kWebSocketCloseKinds; ++i)
        if (w.closes[i] != 0 || i <= 1)
            sample(out,
                   "rivet_websocket_closes_total{code=\"" +
                       std::string(engine::websocket_close_label(i)) + "\"}",
                   w.closes[i]);
    line(out,
         "# HELP rivet_websocket_protocol_errors_total WebSocket connections failed for a "
         "protocol violation (closed 1002, 1007 or 1009).");
    line(out, "# TYPE rivet_websocket_protocol_errors_total counter");
    sample(out, "rivet_websocket_protocol_errors_total", w.violations);
    line(out,
         "# HELP rivet_websocket_slow_closed_total WebSocket clients closed for reading too "
         "slowly (their send buffer passed its limit).");
    line(out, "# TYPE rivet_websocket_slow_closed_total counter");
    sample(out, "rivet_websocket_slow_closed_total", w.slow_closed);
}

std::string prometheus_text(const Snapshot& s) {
    std::string out;
    out.reserve(4096 + s.routes.size() * 5 * 96);
    const auto& t = s.totals;

    line(out, "# HELP rivet_http_requests_total Requests answered, by route and status class.");
    line(out, "# TYPE rivet_http_requests_total counter");
    for (size_t r = 0; r < s.routes.size(); ++r) {
        std::string route = "rivet_http_requests_total{method=\"" + label(s.routes[r].method) +
                            "\",route=\"" + label(s.routes[r].route) + "\",protocol=\"";
        for (size_t p = 0; p < Metrics::kProtocols; ++p)
            for (size_t c = 0; c < Metrics::kClasses; ++c) {
                uint64_t n = t.by_route[r][p][c];
                // 1.1's 2xx always (a dashboard sees every route from the start), others once seen
                if (n == 0 && !(p == Metrics::Http11 && c == 1)) continue;
                sample(out,
                       route + Metrics::kProtocolLabels[p] + "\",code=\"" + Metrics::class_name(c) +
                           "\"}",
                       n);
            }
    }

    durations(out, s);
    family(out, "rivet_http_requests_in_flight", "gauge",
           "Requests read and not answered yet (the scrape itself included).");
    sample(out, "rivet_http_requests_in_flight", s.serving.traffic.in_flight());

    line(out, "# HELP rivet_received_bytes_total Bytes read from client connections.");
    line(out, "# TYPE rivet_received_bytes_total counter");
    sample(out, "rivet_received_bytes_total", s.serving.traffic.bytes_in);
    line(out, "# HELP rivet_sent_bytes_total Bytes written to client connections.");
    line(out, "# TYPE rivet_sent_bytes_total counter");
    sample(out, "rivet_sent_bytes_total", s.serving.traffic.bytes_out);

    line(out, "# HELP rivet_connections_open Client connections open now.");
    line(out, "# TYPE rivet_connections_open gauge");
    sample(out, "rivet_connections_open", s.serving.traffic.open_connections);
    line(out,
         "# HELP rivet_connections_idle Keep-alive connections idle between requests (of those "
         "open).");
    line(out, "# TYPE rivet_connections_idle gauge");
    sample(out, "rivet_connections_idle", s.serving.traffic.idle_connections);
    line(out, "# HELP rivet_connections_accepted_total Client connections accepted.");
    line(out, "# TYPE rivet_connections_accepted_total counter");
    sample(out, "rivet_connections_accepted_total", s.serving.traffic.accepted);
    line(out,
         "# HELP rivet_proxy_header_refused_total Connections from trusted proxies closed for an "
         "invalid PROXY protocol header.");
    line(out, "# TYPE rivet_proxy_header_refused_total counter");
    sample(out, "rivet_proxy_header_refused_total", s.serving.traffic.proxy_refused);
    tls_metrics(out, s.serving.traffic);
    websocket_metrics(out, s.serving.traffic.websockets);
    http2_metrics(out, s.serving.traffic.http2);

    line(out,
         "# HELP rivet_request_body_bytes_buffered Bytes reserved by buffered request bodies "
         "still arriving (limits.max_buffered_body_bytes).");
    line(out, "# TYPE rivet_request_body_bytes_buffered gauge");
    sample(out, "rivet_request_body_bytes_buffered", s.serving.traffic.body_bytes_held);
    family(out, "rivet_unsent_output_bytes", "gauge",
           "Bytes of answers made that clients have not taken "
           "yet (counted against limits.max_buffered_body_bytes with request bodies).");
    sample(out, "rivet_unsent_output_bytes", s.serving.traffic.unsent_bytes_held);
    line(out,
         "# HELP rivet_request_bodies_waiting Connections not read: their body waits for "
         "buffered bytes to be freed.");
    line(out, "# TYPE rivet_request_bodies_waiting gauge");
    sample(out, "rivet_request_bodies_waiting", s.serving.traffic.bodies_waiting);

    line(out, "# HELP rivet_worker_queue_depth Offloaded requests waiting for a worker.");
    line(out, "# TYPE rivet_worker_queue_depth gauge");
    sample(out, "rivet_worker_queue_depth", s.serving.queue_depth);
    line(out, "# HELP rivet_worker_rejections_total Offloaded requests refused (503): queue full.");
    line(out, "# TYPE rivet_worker_rejections_total counter");
    sample(out, "rivet_worker_rejections_total", t.pool_rejected);
    line(out, "# HELP rivet_handler_exceptions_total Handlers that threw (each answered 500).");
    line(out, "# TYPE rivet_handler_exceptions_total counter");
    sample(out, "rivet_handler_exceptions_total", t.handler_exceptions);
    line(out,
         "# HELP rivet_handlers_cancelled_total Waiting handlers stopped because their client "
         "went away.");
    line(out, "# TYPE rivet_handlers_cancelled_total counter");
    sample(out, "rivet_handlers_cancelled_total", t.handlers_cancelled);
    line(out, "# HELP rivet_event_streams_open Server-Sent Event streams open now.");
    line(out, "# TYPE rivet_event_streams_open gauge");
    sample(out, "rivet_event_streams_open", t.event_streams_opened - t.event_streams_closed);
    line(out, "# HELP rivet_event_streams_total Server-Sent Event streams opened.");
    line(out, "# TYPE rivet_event_streams_total counter");
    sample(out, "rivet_event_streams_total", t.event_streams_opened);
    line(out, "# HELP rivet_events_sent_total Server-Sent Events handed to their connections.");
    line(out, "# TYPE rivet_events_sent_total counter");
    sample(out, "rivet_events_sent_total", t.events_sent);
    line(out,
         "# HELP rivet_event_streams_slow_closed_total Server-Sent Event streams closed because "
         "their client read too slowly (past the hard bound of queued bytes).");
    line(out, "# TYPE rivet_event_streams_slow_closed_total counter");
    sample(out, "rivet_event_streams_slow_closed_total", t.event_streams_slow);
    line(out, "# HELP rivet_workers Worker pool threads.");
    line(out, "# TYPE rivet_workers gauge");
    sample(out, "rivet_workers", s.serving.workers);

    line(out, "# HELP rivet_rate_limited_total Requests refused with 429 by the rate limiter.");
    line(out, "# TYPE rivet_rate_limited_total counter");
    sample(out, "rivet_rate_limited_total", t.rate_limited);
    line(out,
         "# HELP rivet_rate_limit_redis_fallbacks_total Limited requests decided without the "
         "shared limit's Redis (unreachable): by the configured fallback.");
    line(out, "# TYPE rivet_rate_limit_redis_fallbacks_total counter");
    sample(out, "rivet_rate_limit_redis_fallbacks_total", t.rate_limit_fallbacks);
    family(out, "rivet_pubsub_redis_unshared_total", "counter",
           "Messages published here while Redis could "
           "not take them: delivered to this instance's subscribers only.");
    sample(out, "rivet_pubsub_redis_unshared_total", t.pubsub_unshared);
    family(out, "rivet_pubsub_redis_received_total", "counter",
           "Messages published by other instances and "
           "delivered to this one's subscribers through Redis.");
    sample(out, "rivet_pubsub_redis_received_total", t.pubsub_received);
    family(out, "rivet_pubsub_redis_reconnects_total", "counter",
           "Times the topics' Redis subscription was "
           "made again after Redis went away.");
    sample(out, "rivet_pubsub_redis_reconnects_total", t.pubsub_reconnects);
    line(out,
         "# HELP rivet_session_store_unavailable_total Requests answered 503 because the "
         "session store (Redis) could not be reached (in this process).");
    line(out, "# TYPE rivet_session_store_unavailable_total counter");
    sample(out, "rivet_session_store_unavailable_total", detail::session_store_unavailable_total());
    line(out, "# HELP rivet_rate_limit_clients Client buckets held (at most the capacity).");
    line(out, "# TYPE rivet_rate_limit_clients gauge");
    sample(out, "rivet_rate_limit_clients", s.rate_limit_clients);
    line(out, "# HELP rivet_rate_limit_capacity Client buckets the table can hold.");
    line(out, "# TYPE rivet_rate_limit_capacity gauge");
    sample(out, "rivet_rate_limit_capacity", s.rate_limit_capacity);

    if (s.serving.has_cache) {
        line(out, "# HELP rivet_file_cache_hits_total Static file lookups answered by the cache.");
        line(out, "# TYPE rivet_file_cache_hits_total counter");
        sample(out, "rivet_file_cache_hits_total", s.serving.cache_hits);
        line(out, "# HELP rivet_file_cache_misses_total Static file lookups that went to disk.");
        line(out, "# TYPE rivet_file_cache_misses_total counter");
        sample(out, "rivet_file_cache_misses_total", s.serving.cache_misses);
    }

    line(out,
         "# HELP rivet_access_log_dropped_total Access log lines lost: the disk fell behind "
         "or a write failed.");
    line(out, "# TYPE rivet_access_log_dropped_total counter");
    sample(out, "rivet_access_log_dropped_total", s.access_log_dropped);

    line(out, "# HELP process_resident_memory_bytes Resident memory size in bytes.");
    line(out, "# TYPE process_resident_memory_bytes gauge");
    sample(out, "process_resident_memory_bytes", s.rss_bytes);
    line(out, "# HELP process_cpu_seconds_total User and system CPU time in seconds.");
    line(out, "# TYPE process_cpu_seconds_total counter");
    sample(out, "process_cpu_seconds_total", s.cpu_seconds);
    line(out, "# HELP process_start_time_seconds Start time since the Unix epoch in seconds.");
    line(out, "# TYPE process_start_time_seconds gauge");
    sample(out, "process_start_time_seconds", s.start_time_s);
    instance_metrics(out, s);
    return out;
}

std::string status_json(const Snapshot& s) {
    const auto& t = s.totals;
    nlohmann::json j;
    j["uptime_s"] = s.uptime_s;
    j["requests"] = t.requests;
    nlohmann::json classes = nlohmann::json::object();
    for (size_t c = 0; c < Metrics::kClasses; ++c) {
        uint64_t n = 0;
        for (const auto& route : t.by_route)
            for (const auto& protocol : route) n += protocol[c];
        classes[Metrics::class_name(c)] = n;
    }
    j["status"] = classes;
    j["latency_bounds_us"] =
        std::vector<uint64_t>(std::begin(Metrics::kBoundsUs), std::end(Metrics::kBoundsUs));
    j["latency_counts"] = t.latency;  // per bucket, the last is +Inf
    j["latency_sum_us"] = t.latency_sum_us;
    j["connections"] = s.serving.traffic.open_connections;
    j["idle_connections"] = s.serving.traffic.idle_connections;
    j["accepted"] = s.serving.traffic.accepted;
    j["bytes_in"] = s.serving.traffic.bytes_in;
    j["bytes_out"] = s.serving.traffic.bytes_out;
    j["queue_depth"] = s.serving.queue_depth;
    j["workers"] = s.serving.workers;
    j["loops"] = s.serving.loops;
    j["pool_rejected"] = t.pool_rejected;
    j["handler_exceptions"] = t.handler_exceptions;
    j["handlers_cancelled"] = t.handlers_cancelled;
    j["event_streams"] = {{"open", t.event_streams_opened - t.event_streams_closed},
                          {"total", t.event_streams_opened},
                          {"events_sent", t.events_sent},
                          {"slow_closed", t.event_streams_slow}};
    j["rate_limiting"] = s.rate_limiting;
    j["rate_limited"] = t.rate_limited;
    j["rate_limit_redis_fallbacks"] = t.rate_limit_fallbacks;
    j["pubsub_redis"] = {{"unshared", t.pubsub_unshared},
                         {"received", t.pubsub_received},
                         {"reconnects", t.pubsub_reconnects}};
    j["rate_limit_clients"] = s.rate_limit_clients;
    if (s.serving.has_cache)
        j["cache"] = {{"hits", s.serving.cache_hits}, {"misses", s.serving.cache_misses}};
    else
        j["cache"] = nullptr;
    const auto& h = s.serving.traffic.tls_handshakes;
    nlohmann::json failures = nlohmann::json::object();
    for (size_t i = 0; i < engine::kTlsFailureKinds; ++i)
        failures[engine::tls_failure_name(engine::TlsFailure(i))] =
            s.serving.traffic.tls_failures[i];
    j["tls"] = {{"handshakes",
                 {{"full_tls12", h.full_tls12},
                  {"resumed_tls12", h.resumed_tls12},
                  {"full_tls13", h.full_tls13},
                  {"resumed_tls13", h.resumed_tls13}}},
                {"failures", failures}};
    const auto& w = s.serving.traffic.websockets;
    j["websocket"] = {{"open", w.opened - w.closed},     {"opened", w.opened},
                      {"messages_in", w.messages_in},    {"messages_out", w.messages_out},
                      {"protocol_errors", w.violations}, {"slow_closed", w.slow_closed}};
    const auto& h2 = s.serving.traffic.http2;
    j["http2"] = {{"connections", h2.connections},
                  {"streams", h2.streams},
                  {"streams_open", http2_streams_open(h2)},
                  {"flow_control_stalls", h2.stalls}};
    j["rss_bytes"] = s.rss_bytes;
    j["cpu_seconds"] = s.cpu_seconds;
    return j.dump();
}

}  // namespace rivet::app
