#include "server/tls_check.hpp"

// MERGE (issue 14): the conversion comes with the "app" branch and tls::check with the "ctx"
// branch; once both are in, drop this guard and its #else.
#if __has_include("app/tls_options.hpp")
#include "app/tls_options.hpp"
#include "tls/context.hpp"
#define RIVET_TLS_CHECK_WIRED 1
#endif

#include <exception>

namespace rivet::server {

std::vector<std::string> check_tls_files(const TlsOptions& options) {
    if (options.certificates.empty()) return {};
#ifdef RIVET_TLS_CHECK_WIRED
    try {
        return tls::check(app::tls_settings(options));
    } catch (const std::exception& e) {  // a value tls_settings refuses (std::invalid_argument)
        return {e.what()};
    }
#else
    return {};
#endif
}

}  // namespace rivet::server
