// ServerConfig: everything the engine needs to know to listen, parse and time out. The limits and
// timeouts are the public types users set in rivet::RunOptions, so there is one definition of each.
#pragma once

#include <cstdint>
#include <string>

#include <rivet/limits.hpp>

#include "http/request_parser.hpp"

namespace rivet::engine {

struct ServerConfig {
    std::string host = "0.0.0.0";
    uint16_t port = 8080;
    unsigned threads = 0;  // I/O loops; 0 = one per core

    Limits limits;
    Timeouts timeouts;
};

// The parser's share of the limits.
inline http::ParserLimits parser_limits(const Limits& l) {
    return {l.max_request_line, l.max_header_bytes, l.max_headers, l.max_body};
}

}  // namespace rivet::engine
