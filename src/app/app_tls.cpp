// The App's side of TLS: the context loaded at start and re-read on reloads (the engine runs
// the handshakes), the startup lines, and the redirect of plain HTTP to HTTPS.
#include <cstdio>
#include <stdexcept>

#include "app/app_impl.hpp"
#include "app/operations/error_log.hpp"
#include "app/server_options.hpp"
#include "app/tls_options.hpp"

namespace rivet {

uint16_t App::tls_port() const {
    return impl_->server ? impl_->server->tls_port() : 0;
}

std::vector<int> App::tls_listening_fds() const {
    return impl_->server ? impl_->server->tls_listening_fds() : std::vector<int>{};
}

void App::Impl::start_tls(const RunOptions& o, engine::ServerConfig& config) {
    tls_context = nullptr;
    redirect_http = false;
    hsts.clear();
    if (o.tls.certificates.empty()) {
        if (!o.tls_listen_fds.empty())
            throw std::invalid_argument("tls_listen_fds needs tls.certificates");
        if (o.tls.redirect_http)  // every plain request would go to a port nobody serves
            throw std::invalid_argument("tls.redirect_http needs tls.certificates");
        return;
    }
    // The engine's TLS listeners share the plain ones' address.
    if (!o.tls.host.empty() && o.tls.host != o.host)
        throw std::invalid_argument(
            "tls.host: HTTPS on an address other than the plain "
            "listener's (" +
            o.host + ") is not supported");
    tls::Settings settings = app::tls_settings(o.tls, o.http2);
    tls_context = tls::Context::load(settings);  // std::runtime_error: App::run fails with it
    config.tls = tls_context;
    config.tls_port = o.tls.port;
    config.tls_listen_fds = o.tls_listen_fds;
    redirect_http = o.tls.redirect_http;
    hsts = app::hsts_value(o.tls);
}

void App::Impl::print_tls_listening() const {
    if (!tls_context) return;
    std::printf("rivet listening on https://%s:%u\n", app::url_host(server->host()).c_str(),
                unsigned(server->tls_port()));
    for (const std::string& line : tls_context->describe())
        std::printf("rivet TLS certificate %s\n", line.c_str());
}

std::string App::Impl::reload_tls(const TlsOptions& next) {
    ++tls_reload_attempts;
    if (!tls_context) {
        if (!next.certificates.empty())
            app::log_warn(
                "rivet: TLS cannot be turned on by a reload (its listener opens at "
                "start): restart to serve HTTPS");
        return {};
    }
    if (next.certificates.empty()) {
        app::log_warn(
            "rivet: TLS cannot be turned off by a reload: the current certificates "
            "stay");
        return {};
    }
    const TlsOptions& now = options.tls;
    if (next.port != now.port || next.host != now.host || next.redirect_http != now.redirect_http ||
        next.hsts_max_age_s != now.hsts_max_age_s ||
        next.hsts_include_subdomains != now.hsts_include_subdomains)
        app::log_warn(
            "rivet: the TLS port, address, redirect and HSTS settings change only at a "
            "restart");
    try {
        // The same ticket keys, so tickets issued before the reload still resume; with a ticket
        // key file, the file's keys, read again (a rotated file takes effect here).
        // HTTP/2 stays as started (the engine's sessions were chosen by it).
        tls_context =
            tls::Context::load(app::tls_settings(next, options.http2), tls_context->ticket_keys());
    } catch (const std::exception& e) {
        return std::string("TLS reload failed, keeping the old certificates: ") + e.what();
    }
    TlsOptions kept = now;  // what the listener and the loops were started with stays
    options.tls = next;
    options.tls.port = kept.port;
    options.tls.host = kept.host;
    options.tls.redirect_http = kept.redirect_http;
    options.tls.hsts_max_age_s = kept.hsts_max_age_s;
    options.tls.hsts_include_subdomains = kept.hsts_include_subdomains;
    app::log_info("rivet: TLS certificates reloaded");
    publish_certificates();
    return {};
}

void App::Impl::publish_certificates() {
    if (!tls_context || !ops) return;
    std::vector<app::CertificateExpiry> expiries;
    for (auto& e : tls_context->expiries()) expiries.push_back({e.cert_file, e.not_after_s});
    ops->set_certificates(std::move(expiries));
}

engine::ServerConfig App::Impl::live_config(const RunOptions& o) const {
    RunOptions listener = o;  // the PROXY protocol and HTTP/2 stay as started, like the address
    listener.proxy_protocol = options.proxy_protocol;
    listener.proxy_trusted = options.proxy_trusted;
    listener.http2 = options.http2;
    engine::ServerConfig c = app::server_config(listener);
    c.tls = tls_context;
    c.tls_port = server->tls_port();
    c.tls_listen_fds = options.tls_listen_fds;
    return c;
}

void App::Impl::redirect_to_https(engine::Exchange& ex) {
    const auto& head = ex.head();
    std::string location = app::https_location(head.authority, server->host(), server->tls_port(),
                                               head.path, head.query);
    ex.respond_simple(308, "Redirecting to " + location + "\n", "Location: " + location + "\r\n");
}

}  // namespace rivet
