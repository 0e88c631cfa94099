// --check-config's look at the certificate files: what tls::check (src/tls/context.hpp) finds
// wrong with them (unreadable, key not matching, chain out of order, expired...).
#pragma once

#include <string>
#include <vector>

#include <rivet/tls.hpp>

namespace rivet::server {

// One line per problem, none when all is well or HTTPS is off.
std::vector<std::string> check_tls_files(const TlsOptions& options);

}  // namespace rivet::server
