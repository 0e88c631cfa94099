// The "limits" section of the settings schema (server/settings.hpp): every size, count, rate and
// timeout the server enforces on a client, with its flag. docs/CONFIG.md explains each.
#include "server/setting_kinds.hpp"
#include "server/tls_config.hpp"

namespace rivet::server::settings {

Section limits_section() {
    const auto secs = [](auto ref) { return seconds(0.001, 86'400, ref); };
    return {
        "limits",
        "Limits and timeouts, in seconds with fractions allowed",
        {
            {"max_request_line",
             integer<size_t>(256, 1 << 20, REF(run.limits.max_request_line)),
             "longest request line in bytes, else 414",
             {flag("--max-request-line", "BYTES")}},
            {"max_header_bytes",
             integer<size_t>(256, 1 << 20, REF(run.limits.max_header_bytes)),
             "largest header block in bytes, else 431",
             {flag("--max-header-bytes", "BYTES")}},
            {"max_headers",
             integer<size_t>(1, 10'000, REF(run.limits.max_headers)),
             "most header fields, else 431",
             {flag("--max-headers", "N")}},
            {"max_body_bytes",
             integer<uint64_t>(0, int64_t(1) << 40, REF(run.limits.max_body)),
             "largest request body in bytes, else 413",
             {flag("--max-body", "BYTES")}},
            {"max_buffered_body_bytes",
             integer<uint64_t>(1, int64_t(1) << 40, REF(run.limits.max_buffered_bodies)),
             "body bytes buffered at once, all connections",
             {flag("--max-buffered-bodies", "BYTES")}},
            {"header_timeout",
             secs(REF(run.timeouts.header_ms)),
             "to receive a whole request head",
             {flag("--header-timeout", "S")}},
            {"body_timeout",
             secs(REF(run.timeouts.body_ms)),
             "between reads of a request body, or its budget wait",
             {flag("--body-timeout", "S")}},
            {"min_body_rate",
             integer<uint64_t>(0, int64_t(1) << 30, REF(run.limits.min_body_rate)),
             "bytes/s over each body timeout, else 408; 0 = none",
             {flag("--min-body-rate", "BYTES")}},
            {"keepalive_timeout",
             secs(REF(run.timeouts.idle_ms)),
             "an idle keep-alive connection is closed after",
             {flag("--keepalive-timeout", "S")}},
            {"write_timeout",
             secs(REF(run.timeouts.write_ms)),
             "a client with answers waiting must take some in each",
             {flag("--write-timeout", "S")}},
            {"min_send_rate",
             integer<uint64_t>(0, int64_t(1) << 30, REF(run.limits.min_send_rate)),
             "bytes/s a client must take over each write timeout; 0 = none",
             {flag("--min-send-rate", "BYTES")}},
            {"drain_timeout",
             seconds(0, 3'600, REF(run.timeouts.drain_ms)),
             "in-flight requests get this long at shutdown",
             {flag("--drain-timeout", "S")}},
            {"drain_grace",
             seconds(0, 3'600, REF(run.timeouts.drain_grace_ms)),
             "lame duck before the drain (Connection: close, /healthz 503)",
             {flag("--drain-grace", "S")}},
            {"handshake_timeout",
             seconds(kMinHandshakeTimeout, kMaxHandshakeTimeout, REF(run.timeouts.handshake_ms)),
             "a TLS handshake must finish this long after the accept",
             {flag("--handshake-timeout", "S")}},
            {"max_requests_per_connection",
             integer<uint32_t>(0, 4'294'967'295, REF(run.limits.max_requests_per_connection)),
             "then the connection closes; 0 = no limit",
             {flag("--max-requests-per-connection", "N")}},
        }};
}

}  // namespace rivet::server::settings
