// The public rivet::TlsOptions in the tls layer's terms (tls::Settings), and what the App adds to
// answers because of TLS: the redirect of plain HTTP to HTTPS and the HSTS field. Pure
// functions, so that they are tested without a handshake.
#pragma once

#include <rivet/tls.hpp>

#include <cstdint>
#include <string>
#include <string_view>

#include "tls/settings.hpp"

namespace rivet::app {

// Throws std::invalid_argument naming the bad value: no certificates, a certificate without its
// key file (or the reverse), min_version other than "1.2" or "1.3". `http2` (RunOptions::http2):
// ALPN offers "h2" before "http/1.1" (the server's order wins: a client offering both gets h2);
// without it, only "http/1.1".
tls::Settings tls_settings(const TlsOptions& options, bool http2);

// The Strict-Transport-Security value ("max-age=N[; includeSubDomains]"); empty when
// hsts_max_age_s is 0 (no field).
std::string hsts_value(const TlsOptions& options);

// A host as it stands in a URL: IPv6 addresses in brackets ("[::1]"), others as they are.
std::string url_host(std::string_view host);

// Where a plain request is redirected: https://<name>[:<tls_port> unless 443]<path>[?<query>].
// <name> is the request's authority (the parser's: an absolute-form target's, else the Host
// field's) without its port; when that is no usable host name (missing, or with characters no
// host has, which would let the client steer the Location elsewhere) it is `listener_host`
// (IPv6 in brackets).
std::string https_location(std::string_view authority, std::string_view listener_host,
                           uint16_t tls_port, std::string_view path, std::string_view query);

}  // namespace rivet::app
