#include "server/tls_check.hpp"

#include <exception>

#include "app/tls_options.hpp"
#include "tls/context.hpp"

namespace rivet::server {

std::vector<std::string> check_tls_files(const TlsOptions& options) {
    if (options.certificates.empty()) return {};
    try {
        return tls::check(app::tls_settings(options, /*http2=*/true));  // ALPN: no file's concern
    } catch (const std::exception& e) {  // a value tls_settings refuses (std::invalid_argument)
        return {e.what()};
    }
}

}  // namespace rivet::server
