// Client addresses for rate limiting and logs: the address and network types are net's
// (net/ip_network.hpp, shared with the engine's PROXY protocol); this adds the client named by
// X-Forwarded-For, which needs HTTP header fields.
#pragma once

#include <span>

#include "http/request_parser.hpp"
#include "net/ip_network.hpp"

namespace rivet::app {

using net::format_ip;
using net::IpAddress;
using net::IpNetwork;
using net::NetworkList;
using net::parse_ip;
using net::parse_network;
using net::to_string;

// The client behind trusted proxies: walks X-Forwarded-For from the right (the entry the
// nearest proxy added) past every address that is itself a trusted proxy, as nginx's
// real_ip_recursive does. Returns `peer` when the header is absent or unusable.
IpAddress forwarded_client(const IpAddress& peer, std::span<const http::Header> headers,
                           const NetworkList& trusted);

}  // namespace rivet::app
