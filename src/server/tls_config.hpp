// HTTPS in the rivet executable's configuration: the bounds of the file's "tls" section
// (docs/CONFIG.md; its settings are settings::tls_section(), defined in tls_config.cpp) and the
// checks that need the whole configuration, flags included.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "server/config.hpp"

namespace rivet::server {

// tls.certificates: at most this many (one per host name served; SNI picks among them).
inline constexpr size_t kMaxTlsCertificates = 64;
// tls.hsts / --hsts: at most two years, the longest max-age browsers' preload lists ask for.
inline constexpr uint64_t kMaxHstsSeconds = 63'072'000;
// tls.ticket_key_lifetime: from a minute to a day.
inline constexpr uint32_t kMinTicketKeyLifetime = 60;
inline constexpr uint32_t kMaxTicketKeyLifetime = 86'400;
// tls.session_cache: entries.
inline constexpr size_t kMaxSessionCache = 1'000'000;
// --handshake-timeout / limits.handshake_timeout, in seconds.
inline constexpr double kMinHandshakeTimeout = 0.001;
inline constexpr double kMaxHandshakeTimeout = 3'600;

// What the TLS settings of a whole configuration (file, then flags) get wrong together: TLS
// settings without a certificate (only flags can do that: the section needs one), or the TLS
// port on the plain or admin port. Empty when nothing is.
std::string check_tls_settings(const Config& config);

}  // namespace rivet::server
