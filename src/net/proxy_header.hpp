// The PROXY protocol header (HAProxy's proxy-protocol.txt, versions 1 and 2): what a proxy in
// front of the server sends first on each connection to name the client it connects for.
//
// A pure parser over the caller's bytes, in the picohttpparser style: call it with everything
// received so far; it allocates nothing and keeps no state, and since a header is at most
// kMaxProxyHeader bytes a parse from the start each time costs little.
#pragma once

#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace rivet::net {

// Version 1 is one text line of at most 107 bytes, CRLF included (the specification's bound).
inline constexpr size_t kMaxProxyV1Line = 107;
// Version 2 is 16 bytes and a 16-bit length of addresses and TLVs. A header longer than this in
// all is refused: HAProxy's addresses and usual TLVs (SSL, unique id, authority) take a few
// hundred bytes, and this much is buffered at most per connection before it is known.
inline constexpr size_t kMaxProxyHeader = 4096;

struct ProxyHeader {
    enum class Kind : uint8_t {
        Absent,      // the bytes start with neither signature: not a PROXY header at all
        Incomplete,  // a prefix of a header, possibly of a valid one: call again with more
        Invalid,     // a signature, then something the protocol does not allow
        Done,        // a whole header: `consumed` bytes, the rest is the connection's own
    };
    Kind kind = Kind::Incomplete;
    size_t consumed = 0;  // Done: the header's length
    // Done: the client's address (AF_INET or AF_INET6, with its port). false: keep the
    // connection's own address (v2 LOCAL, as a proxy's health check sends; v1 UNKNOWN; v2 UNSPEC
    // or UNIX addresses).
    bool has_source = false;
    sockaddr_storage source{};
};

// Parses the header at the start of `in`. `max_header` (at most kMaxProxyHeader) bounds a
// version 2 header; version 1 has its own bound.
ProxyHeader parse_proxy_header(std::string_view in, size_t max_header = kMaxProxyHeader);

}  // namespace rivet::net
