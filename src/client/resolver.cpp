#include "client/resolver.hpp"

#include <ares.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>

#include <cstring>
#include <memory>
#include <unordered_map>

namespace rivet::client {

namespace {

// The loop thread's c-ares channel and the queries waiting on it.
class Channel {
public:
    explicit Channel(net::Loop& loop) : loop_(loop) {
        static const int library = ares_library_init(ARES_LIB_INIT_ALL);
        (void)library;
        ares_options opts{};
        opts.sock_state_cb = &Channel::on_socket_state;
        opts.sock_state_cb_data = this;
        status_ = ares_init_options(&channel_, &opts, ARES_OPT_SOCK_STATE_CB);
    }
    ~Channel() {
        if (status_ == ARES_SUCCESS) ares_destroy(channel_);  // its callbacks see ARES_EDESTRUCTION
        for (auto& [fd, id] : watches_) loop_.unwatch(id);
        if (timer_) loop_.cancel_timer(timer_);
    }

    net::Loop& loop() { return loop_; }

    uint64_t query(const std::string& host, uint16_t port, Resolved done) {
        const uint64_t id = next_id_++;
        if (status_ != ARES_SUCCESS) {
            loop_.post([done = std::move(done), s = status_] {
                done({}, std::string("DNS resolver unavailable: ") + ares_strerror(s));
            });
            return id;
        }
        pending_.emplace(id, std::move(done));
        ares_addrinfo_hints hints{};
        hints.ai_family = AF_UNSPEC;
        hints.ai_socktype = SOCK_STREAM;
        hints.ai_flags = ARES_AI_NUMERICSERV;
        auto* arg = new Query{this, id, port, host};
        ares_getaddrinfo(channel_, host.c_str(), std::to_string(port).c_str(), &hints,
                         &Channel::on_result, arg);
        rearm();
        return id;
    }

    void cancel(uint64_t id) { pending_.erase(id); }

private:
    struct Query {
        Channel* channel;
        uint64_t id;
        uint16_t port;
        std::string host;
    };

    static void on_socket_state(void* data, ares_socket_t fd, int readable, int writable) {
        auto* self = static_cast<Channel*>(data);
        if (auto it = self->watches_.find(fd); it != self->watches_.end()) {
            self->loop_.unwatch(it->second);
            self->watches_.erase(it);
        }
        if (!readable && !writable) return;
        const uint32_t interest =
            (readable ? uint32_t(net::kReadable) : 0u) | (writable ? uint32_t(net::kWritable) : 0u);
        self->watches_[fd] = self->loop_.watch(fd, interest, [self, fd](uint32_t ev) {
            const bool r = ev & (net::kReadable | net::kHangup);
            const bool w = ev & net::kWritable;
            ares_process_fd(self->channel_, r ? fd : ARES_SOCKET_BAD, w ? fd : ARES_SOCKET_BAD);
            self->rearm();
        });
    }

    static void on_result(void* arg, int status, int, ares_addrinfo* res) {
        std::unique_ptr<Query> q(static_cast<Query*>(arg));
        Channel* self = q->channel;
        std::vector<Address> out;
        if (status == ARES_SUCCESS && res) {
            for (ares_addrinfo_node* n = res->nodes; n; n = n->ai_next) {
                if (n->ai_addrlen > sizeof(sockaddr_storage)) continue;
                Address a;
                std::memcpy(&a.addr, n->ai_addr, n->ai_addrlen);
                a.len = socklen_t(n->ai_addrlen);
                out.push_back(a);
            }
        }
        if (res) ares_freeaddrinfo(res);
        if (status == ARES_EDESTRUCTION) return;
        auto it = self->pending_.find(q->id);
        if (it == self->pending_.end()) return;  // cancelled
        Resolved done = std::move(it->second);
        self->pending_.erase(it);
        std::string error;
        if (out.empty())
            error = "cannot resolve " + q->host + ": " +
                    (status == ARES_SUCCESS ? "no address" : ares_strerror(status));
        // Posted: c-ares may call back from inside ares_getaddrinfo (a hosts-file answer).
        self->loop_.post([done = std::move(done), out = std::move(out), error]() mutable {
            done(std::move(out), std::move(error));
        });
    }

    // c-ares' own retransmission timeouts, as one loop timer.
    void rearm() {
        if (timer_) loop_.cancel_timer(timer_);
        timer_ = 0;
        timeval tv{};
        if (!ares_timeout(channel_, nullptr, &tv)) return;  // nothing waiting
        const uint64_t ms = uint64_t(tv.tv_sec) * 1000 + uint64_t(tv.tv_usec) / 1000 + 1;
        timer_ = loop_.call_after(ms, [this] {
            timer_ = 0;
            ares_process_fd(channel_, ARES_SOCKET_BAD, ARES_SOCKET_BAD);
            rearm();
        });
    }

    net::Loop& loop_;
    ares_channel channel_ = nullptr;
    int status_ = ARES_ENOTINITIALIZED;
    uint64_t next_id_ = 1;
    net::Loop::TimerId timer_ = 0;
    std::unordered_map<uint64_t, Resolved> pending_;
    std::unordered_map<int, net::Loop::WatchId> watches_;
};

thread_local std::unique_ptr<Channel> t_channel;

Channel& channel_for(net::Loop& loop) {
    if (!t_channel || &t_channel->loop() != &loop) t_channel = std::make_unique<Channel>(loop);
    return *t_channel;
}

bool literal(const std::string& host, uint16_t port, Address& a) {
    auto* v4 = reinterpret_cast<sockaddr_in*>(&a.addr);
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&a.addr);
    if (inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons(port);
        a.len = sizeof(sockaddr_in);
        return true;
    }
    if (inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons(port);
        a.len = sizeof(sockaddr_in6);
        return true;
    }
    return false;
}

}  // namespace

uint64_t resolve(net::Loop& loop, const std::string& host, uint16_t port, Resolved done) {
    Address a;
    if (literal(host, port, a)) {
        loop.post([done = std::move(done), a] { done({a}, {}); });
        return 0;
    }
    return channel_for(loop).query(host, port, std::move(done));
}

void cancel_resolve(uint64_t id) {
    if (id && t_channel) t_channel->cancel(id);
}

}  // namespace rivet::client
