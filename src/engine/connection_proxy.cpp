// Connection, the PROXY protocol: behind HAProxy (send-proxy, send-proxy-v2) a connection's first
// bytes name the client the proxy connects for; access logs and rate limits then see that client
// rather than the proxy. Only from trusted peers, since whoever sends the header picks the
// address. The header comes before the transport's first byte, so a TLS listener reads it too,
// before the ClientHello. A listener without the protocol never comes here: the stage is decided
// at the accept.
#include <netinet/in.h>
#include <unistd.h>

#include <cerrno>
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
    if (!owner_.config().proxy_trusted.contains(net::IpAddress::of(peer))) return;
    stage_ = Stage::ProxyHeader;  // timed as a request head: from the accept, header_ms
    proxy_header_ = std::make_unique<ProxyHeaderRead>();
    proxy_header_->accepted_ms = owner_.loop().now_ms();
}

// Stage::ProxyHeader: reads what the peer sent first, raw, whatever the transport. The header is
// optional: bytes that begin with neither signature are the transport's already (HAProxy's
// health checks send none unless check-send-proxy). An invalid one closes the connection without
// an answer: what follows is not known to be HTTP, or TLS.
void Connection::read_proxy_header() {
    char* buf = owner_.read_buffer();
    const size_t have = proxy_header_->bytes.size();
    std::memcpy(buf, proxy_header_->bytes.data(), have);
    const ssize_t n = ::read(fd_, buf + have, IoThread::kReadBufferSize - have);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) return close_now();
    if (n < 0) return;
    const size_t len = have + size_t(n);
    const net::ProxyHeader h = net::parse_proxy_header({buf, len});
    size_t used = 0;
    switch (h.kind) {
        case net::ProxyHeader::Kind::Incomplete:
            proxy_header_->bytes.assign(buf, len);  // at most net::kMaxProxyHeader bytes
            return;
        case net::ProxyHeader::Kind::Invalid:
            LoopStats::bump(owner_.stats().proxy_refused);
            return close_now();
        case net::ProxyHeader::Kind::Absent:
            break;
        case net::ProxyHeader::Kind::Done:
            if (h.has_source) set_peer(h.source);
            used = h.consumed;
            break;
    }
    const uint64_t accepted_ms = proxy_header_->accepted_ms;
    proxy_header_.reset();
    begin_transport({buf + used, len - used}, accepted_ms);
}

}  // namespace rivet::engine
