// A raw HTTP/1.1 client for the framework's tests on real sockets: what is sent and read is
// exactly the bytes, so framing, order and fields can be checked as they are on the wire.
#pragma once

#include <rivet/app.hpp>

#include <cstdint>
#include <string>

namespace rivet::test {

// Sends `request` to 127.0.0.1:`port` and reads until `responses` complete responses arrived
// (0: until the peer closes), or 5 s passed without a byte.
std::string exchange(uint16_t port, const std::string& request, int responses = 1);

// The server such a client talks to: one loop, `workers` workers, a free port of 127.0.0.1
// (App::start returns it), no listening line.
inline RunOptions local_server(unsigned workers = 1) {
    RunOptions o;
    o.host = "127.0.0.1";
    o.port = 0;
    o.threads = 1;
    o.workers = workers;
    o.quiet = true;
    return o;
}

}  // namespace rivet::test
