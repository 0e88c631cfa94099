// What an idle keep-alive connection holds (Connection::Stage::Resting): the Connection and its
// TCP transport, each a heap block, and its place in the loop's table of descriptors. The goal
// is at most 256 bytes of RSS per idle connection (issue 26; bench idle_c10000 measures the
// whole server's growth). A member added to either class shows up here first.
#include <gtest/gtest.h>

#include "engine/connection.hpp"
#include "engine/transport.hpp"

namespace rivet::engine {
namespace {

// glibc's malloc: a block costs its size plus an 8-byte header, rounded up to 16.
constexpr size_t heap_block(size_t bytes) {
    return (bytes + 8 + 15) / 16 * 16;
}

TEST(IdleConnectionSize, FitsIn256Bytes) {
    const size_t idle = heap_block(sizeof(Connection)) + heap_block(sizeof(TcpTransport)) +
                        sizeof(Connection*);  // IoThread::by_fd_
    EXPECT_LE(idle, 256u) << "Connection " << sizeof(Connection) << " B, TcpTransport "
                          << sizeof(TcpTransport) << " B";
    // Nothing a resting connection does not need: today it is 128 + 48 + 8.
    EXPECT_LE(heap_block(sizeof(Connection)), 128u) << sizeof(Connection);
}

}  // namespace
}  // namespace rivet::engine
