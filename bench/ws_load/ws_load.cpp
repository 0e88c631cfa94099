// ws_load: the WebSocket load generator of bench/ws_bench.py (one thread, epoll; pin it to its
// own core). Three modes, each ending with one JSON line on stdout (bench/ws_load_output.py
// reads it) and a summary on stderr:
//
//   echo       -c N connections, each keeps --depth messages of --size bytes in flight (sends
//              one, waits for its echo, sends the next) for --duration seconds. Every echo is
//              checked: its length, its sequence stamp (the first 9 bytes: order and identity),
//              and every 64th (and every compressed one) byte for byte. With --server-pid, the
//              server's CPU (utime+stime from /proc) over the measured window and the drain of
//              the messages still in flight at its end, per message: connecting and closing are
//              not counted.
//   idle       with --server-pid: 200 connections opened, one echo each, closed (warm-up); then
//              the server's VmRSS, N connections opened with one 32-byte echo each, VmRSS again:
//              bytes per idle connection. --hold S keeps them S seconds more.
//   subscribe  N connections to a chat-like route (every message a client sends is published
//              to every client) and one more, the publisher, which sends --messages messages,
//              at most --window of them not yet delivered to every subscriber. Counts
//              deliveries (in order, no duplicates, each message found by its stamp anywhere in
//              what arrives) per second, and the server's CPU per delivery.
//
// Client frames are masked with one key per connection (the server unmasks every byte all the
// same); only the stamp is re-masked per message, so that a 16 KiB echo costs the client a
// write and a read, not a pass over the payload.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "loop.hpp"
#include "modes.hpp"

using namespace wsload;

namespace {

void usage() {
    std::fprintf(stderr,
                 "usage: ws_load --port P [--host 127.0.0.1] [--path /ws/echo] [--mode "
                 "echo|idle|subscribe]\n"
                 "  [-c N] [--size BYTES] [--depth K] [--duration S] [--binary] [--deflate]\n"
                 "  [--server-pid PID] [--hold S] [--messages M] [--window W]\n");
    std::exit(2);
}

void raise_nofile() {
    rlimit r{};
    if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
        r.rlim_cur = r.rlim_max;
        setrlimit(RLIMIT_NOFILE, &r);
    }
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto next = [&]() -> std::string {
            if (i + 1 >= argc) usage();
            return argv[++i];
        };
        if (a == "--port")
            o.net.port = std::atoi(next().c_str());
        else if (a == "--host")
            o.net.host = next();
        else if (a == "--path")
            o.net.path = next();
        else if (a == "--mode")
            o.mode = next();
        else if (a == "-c" || a == "--connections")
            o.connections = std::stoul(next());
        else if (a == "--size")
            o.size = std::stoul(next());
        else if (a == "--depth")
            o.depth = std::stoul(next());
        else if (a == "--duration")
            o.duration_s = std::atof(next().c_str());
        else if (a == "--binary")
            o.binary = true;
        else if (a == "--deflate")
            o.net.deflate = true;
        else if (a == "--server-pid")
            o.server_pid = std::atoi(next().c_str());
        else if (a == "--hold")
            o.hold_s = std::atof(next().c_str());
        else if (a == "--messages")
            o.messages = std::stoul(next());
        else if (a == "--window")
            o.window = std::stoul(next());
        else
            usage();
    }
    if (o.net.port <= 0 || o.connections == 0 || o.depth == 0 || o.size < 16) usage();
    raise_nofile();
    if (o.mode == "echo") return run_echo(o);
    if (o.mode == "idle") return run_idle(o);
    if (o.mode == "subscribe") return run_subscribe(o);
    usage();
}
