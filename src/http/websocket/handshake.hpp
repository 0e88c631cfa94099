// The WebSocket opening handshake's keys (RFC 6455 §4.2): which Sec-WebSocket-Key is valid, the
// Sec-WebSocket-Accept that answers it, and the token lists of Sec-WebSocket-Protocol.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace rivet::http::ws {

// A key is the base64 of 16 bytes: 24 characters ending in "==".
bool valid_key(std::string_view key);
// base64(SHA-1(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11")).
std::string accept_key(std::string_view key);
// The comma-separated tokens of a header value (Sec-WebSocket-Protocol, Connection, Upgrade),
// trimmed, empty ones dropped.
std::vector<std::string_view> split_tokens(std::string_view value);
// Whether the comma-separated `value` holds `token`, ASCII case-insensitively.
bool has_token(std::string_view value, std::string_view token);

}  // namespace rivet::http::ws
