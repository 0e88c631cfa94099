// Session: the protocol a connection speaks over its transport. A Connection runs one session at
// a time: HTTP/1.1 (http1/) from its first byte, or after the TLS handshake chose it by ALPN; a
// session can hand the connection to another (HTTP/1.1 -> WebSocket after a 101) together with
// the bytes it read past its last message (Connection::hand_off). The connection owns the socket
// side (the transport, epoll interest, the one timer, closing); the session owns every protocol
// state and answers through engine::Exchange, the one request/response interface the
// application sees whatever the protocol.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>

#include "engine/reply.hpp"

namespace rivet::engine {

class Connection;

class Session {
public:
    virtual ~Session() = default;

    // The connection is ready for this protocol. `input`: bytes already read for it (what the
    // previous session read past its last message; empty on a fresh connection, whose first
    // bytes wait in the socket). Reads as a readable event would. May close the connection.
    virtual void start(std::string_view input) = 0;
    virtual void on_readable() = 0;
    virtual void on_writable() = 0;
    virtual void on_timeout() = 0;
    // The connection closed (whatever closed it): drop protocol state, tell whoever waits on
    // it (deferred answers, streamed bodies). The session must not touch the transport.
    virtual void on_closed() = 0;

    // A drain began: end after what is in flight (at once when nothing is read or owed).
    virtual void close_when_idle() = 0;

    // Tasks this session posted to the loop, delivered while the connection lives.
    // A deferred answer (Deferred::complete from any thread), by the sequence defer() gave it.
    virtual void complete(uint64_t sequence, Reply&& reply) = 0;
    // The server's body budget may have room again. False: still waiting.
    virtual bool admit_waiting_body() { return true; }
    // A kick the session posted itself (IoThread::kick): go on with buffered input.
    virtual void kicked() {}
    // A StreamWaker of this session's stream woke it (`link` names which stream).
    virtual void resume_stream(const StreamLink* /*link*/) {}
};

}  // namespace rivet::engine
