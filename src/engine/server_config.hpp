// ServerConfig: everything the engine needs to know to listen, parse and time out.
#pragma once

#include <cstdint>
#include <string>

#include "http/request_parser.hpp"

namespace rivet::engine {

struct ServerConfig {
    std::string host = "0.0.0.0";
    uint16_t port = 8080;
    unsigned threads = 0;  // I/O loops; 0 = one per core

    http::ParserLimits limits;

    uint64_t header_timeout_ms = 10'000;  // whole request head, from its first byte (slowloris)
    uint64_t body_timeout_ms = 60'000;    // between two reads of a request body
    uint64_t idle_timeout_ms = 60'000;    // keep-alive connection with nothing to do
    uint64_t write_timeout_ms = 60'000;   // between two writes that made progress
    uint64_t linger_timeout_ms = 2'000;   // reading what a client still sends after our close
    uint64_t drain_timeout_ms = 10'000;   // graceful stop: in-flight requests get this long

    size_t max_connections = 100'000;          // past it, accepting pauses until one closes
    uint32_t max_requests_per_connection = 0;  // 0 = unlimited
    size_t max_pipelined = 64;  // responses waiting in order per connection before reading pauses
    size_t output_high_water = 1 << 20;  // unsent bytes past which reading pauses
};

}  // namespace rivet::engine
