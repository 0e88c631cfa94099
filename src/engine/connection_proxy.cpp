// Connection, the PROXY protocol: behind HAProxy (send-proxy, send-proxy-v2) a connection's first
// bytes name the client the proxy connects for; access logs and rate limits then see that client
// rather than the proxy. Only from trusted peers, since whoever sends the header picks the
// address. A listener without the protocol never comes here: the phase is decided at the accept.
#include <netinet/in.h>

#include <cstring>

#include "engine/connection.hpp"
#include "engine/io_thread.hpp"
#include "net/proxy_header.hpp"

namespace rivet::engine {

void Connection::set_peer(const sockaddr_storage& peer) {
    peer_family_ = uint8_t(peer.ss_family);
    std::memset(peer_bytes_, 0, sizeof peer_bytes_);
    if (peer.ss_family == AF_INET)
        std::memcpy(peer_bytes_, &reinterpret_cast<const sockaddr_in&>(peer).sin_addr, 4);
    else if (peer.ss_family == AF_INET6)
        std::memcpy(peer_bytes_, &reinterpret_cast<const sockaddr_in6&>(peer).sin6_addr, 16);
}

void Connection::expect_proxy_header(const sockaddr_storage& peer) {
    if (owner_.config().proxy_trusted.contains(net::IpAddress::of(peer)))
        phase_ = Phase::ProxyHeader;  // timed as a request head: from the accept, header_ms
}

// Phase::ProxyHeader: `data` is what the peer sent first. Returns the header's length; the HTTP
// request follows it in the same bytes. The header is optional: bytes that begin with neither
// signature are HTTP already (HAProxy's health checks send none unless check-send-proxy).
// An invalid one closes the connection without an answer: what follows is not known to be HTTP.
size_t Connection::read_proxy_header(const char* data, size_t len) {
    const net::ProxyHeader h = net::parse_proxy_header({data, len});
    switch (h.kind) {
        case net::ProxyHeader::Kind::Incomplete:
            return 0;  // in_ keeps it (at most net::kMaxProxyHeader bytes)
        case net::ProxyHeader::Kind::Absent:
            phase_ = Phase::Head;
            return 0;
        case net::ProxyHeader::Kind::Invalid:
            LoopStats::bump(owner_.stats().proxy_refused);
            close_now();
            return 0;
        case net::ProxyHeader::Kind::Done:
            if (h.has_source) set_peer(h.source);
            phase_ = Phase::Head;
            return h.consumed;
    }
    return 0;
}

}  // namespace rivet::engine
