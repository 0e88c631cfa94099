// The Boost.Beast peer of bench/ws_bench.py: a WebSocket echo server on one thread (one
// io_context run by main), as Beast's own asynchronous examples are written.
//     ws_beast_echo PORT [--deflate]
// Every text or binary message comes back with its type; --deflate offers permessage-deflate
// (Beast's own zlib, server_enable). The stream sits on a plain tcp::socket (no per-operation
// timers, the fastest of Beast's set-ups) and sends a message as one frame; Beast answers pings
// and completes closes itself.
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;

namespace {

bool g_deflate = false;

class EchoSession : public std::enable_shared_from_this<EchoSession> {
public:
    explicit EchoSession(tcp::socket socket) : ws_(std::move(socket)) {}

    void start() {
        ws_.next_layer().set_option(tcp::no_delay(true));
        // One frame per message (Beast's default cuts a message into frames of its 4 KiB
        // write buffer: four writes for a 16 KiB echo where one will do).
        ws_.auto_fragment(false);
        if (g_deflate) {
            websocket::permessage_deflate opt;
            opt.server_enable = true;
            ws_.set_option(opt);
        }
        ws_.async_accept([self = shared_from_this()](beast::error_code ec) {
            if (!ec) self->read();
        });
    }

private:
    void read() {
        ws_.async_read(buffer_, [self = shared_from_this()](beast::error_code ec, size_t) {
            if (ec) return;  // closed by the client, or an error: the session ends
            self->ws_.text(self->ws_.got_text());
            self->ws_.async_write(self->buffer_.data(), [self](beast::error_code ec, size_t) {
                if (ec) return;
                self->buffer_.consume(self->buffer_.size());
                self->read();
            });
        });
    }

    websocket::stream<tcp::socket> ws_;
    beast::flat_buffer buffer_;
};

void accept_next(tcp::acceptor& acceptor) {
    acceptor.async_accept([&acceptor](beast::error_code ec, tcp::socket socket) {
        if (!ec) std::make_shared<EchoSession>(std::move(socket))->start();
        accept_next(acceptor);
    });
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s PORT [--deflate]\n", argv[0]);
        return 2;
    }
    g_deflate = argc > 2 && std::strcmp(argv[2], "--deflate") == 0;
    asio::io_context io(1);  // one thread: the concurrency hint lets Asio skip its locks
    tcp::endpoint at(asio::ip::make_address("127.0.0.1"),
                     static_cast<unsigned short>(std::atoi(argv[1])));
    tcp::acceptor acceptor(io);
    acceptor.open(at.protocol());
    acceptor.set_option(asio::socket_base::reuse_address(true));
    acceptor.bind(at);
    acceptor.listen(4096);  // the backlog of every server of the benchmark
    accept_next(acceptor);
    io.run();
}
