// How far a peer has taken what we sent, as the kernel knows it: for a minimum send rate judged
// on what the client took rather than on what we wrote. A socket's send buffer can hold
// megabytes, so our writes come in bursts whenever it empties by half, and a client that reads
// steadily can go a long while without a single write of ours moving bytes.
#pragma once

#include <cstdint>
#include <optional>

namespace rivet::net {

// The bytes of this TCP connection the peer has acknowledged so far (TCP_INFO's
// tcpi_bytes_acked, Linux 4.1+). Nothing when the socket cannot tell (not TCP).
std::optional<uint64_t> tcp_bytes_acked(int fd);

}  // namespace rivet::net
