#include "h2_client.hpp"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>

namespace rivet::engine::testing {

namespace {

using Clock = std::chrono::steady_clock;

int remaining_ms(Clock::time_point deadline) {
    auto left = std::chrono::duration_cast<Millis>(deadline - Clock::now()).count();
    return left > 0 ? int(left) : 0;
}

std::string find(const H2Fields& fields, std::string_view name) {
    for (const auto& [n, v] : fields)
        if (n == name) return v;
    return "";
}

nghttp2_nv field(std::string_view name, std::string_view value) {
    return {reinterpret_cast<uint8_t*>(const_cast<char*>(name.data())),
            reinterpret_cast<uint8_t*>(const_cast<char*>(value.data())), name.size(), value.size(),
            NGHTTP2_NV_FLAG_NONE};
}

}  // namespace

std::string H2Stream::field(std::string_view name) const {
    return find(fields, name);
}

std::string H2Stream::trailer(std::string_view name) const {
    return find(trailers, name);
}

// nghttp2's callbacks, with the client as user data.
struct H2Client::Callbacks {
    static H2Client& of(void* p) { return *static_cast<H2Client*>(p); }

    static int on_header(nghttp2_session*, const nghttp2_frame* frame, const uint8_t* name,
                         size_t namelen, const uint8_t* value, size_t valuelen, uint8_t,
                         void* user) {
        H2Stream& s = of(user).streams_[frame->hd.stream_id];
        std::string n(reinterpret_cast<const char*>(name), namelen);
        std::string v(reinterpret_cast<const char*>(value), valuelen);
        if (frame->headers.cat == NGHTTP2_HCAT_HEADERS) {
            s.trailers.emplace_back(std::move(n), std::move(v));
        } else if (n == ":status") {
            s.status = std::stoi(v);
        } else {
            s.fields.emplace_back(std::move(n), std::move(v));
        }
        return 0;
    }

    static int on_frame_recv(nghttp2_session*, const nghttp2_frame* frame, void* user) {
        H2Client& c = of(user);
        switch (frame->hd.type) {
            case NGHTTP2_HEADERS:
            case NGHTTP2_DATA:
                if (frame->hd.flags & NGHTTP2_FLAG_END_STREAM)
                    c.streams_[frame->hd.stream_id].ended = true;
                break;
            case NGHTTP2_RST_STREAM: {
                H2Stream& s = c.streams_[frame->hd.stream_id];
                s.reset_by_server = true;
                s.reset_code = frame->rst_stream.error_code;
                break;
            }
            case NGHTTP2_GOAWAY:
                c.goaway_ = true;
                c.goaway_code_ = frame->goaway.error_code;
                c.goaway_last_ = frame->goaway.last_stream_id;
                break;
            case NGHTTP2_SETTINGS:
                if (!(frame->hd.flags & NGHTTP2_FLAG_ACK))
                    for (size_t i = 0; i < frame->settings.niv; ++i)
                        c.server_settings_[frame->settings.iv[i].settings_id] =
                            frame->settings.iv[i].value;
                break;
            case NGHTTP2_PING:
                if (frame->hd.flags & NGHTTP2_FLAG_ACK) ++c.pings_acked_;
                break;
            case NGHTTP2_WINDOW_UPDATE:
                ++c.window_updates_;
                break;
            default:
                break;
        }
        return 0;
    }

    static int on_data(nghttp2_session*, uint8_t, int32_t id, const uint8_t* data, size_t len,
                       void* user) {
        of(user).streams_[id].body.append(reinterpret_cast<const char*>(data), len);
        return 0;
    }

    static int on_close(nghttp2_session*, int32_t id, uint32_t code, void* user) {
        H2Stream& s = of(user).streams_[id];
        s.closed = true;
        s.close_code = code;
        return 0;
    }

    static ssize_t read_body(nghttp2_session*, int32_t id, uint8_t* buf, size_t length,
                             uint32_t* flags, nghttp2_data_source*, void* user) {
        H2Stream& s = of(user).streams_[id];
        if (s.held) return NGHTTP2_ERR_DEFERRED;
        const size_t n = std::min(length, s.upload.size() - s.uploaded);
        std::memcpy(buf, s.upload.data() + s.uploaded, n);
        s.uploaded += n;
        if (s.uploaded == s.upload.size()) *flags |= NGHTTP2_DATA_FLAG_EOF;
        return ssize_t(n);
    }
};

H2Client::H2Client(Client& raw, std::vector<nghttp2_settings_entry> settings) : raw_(raw) {
    nghttp2_session_callbacks* cb = nullptr;
    nghttp2_session_callbacks_new(&cb);
    nghttp2_session_callbacks_set_on_header_callback(cb, Callbacks::on_header);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cb, Callbacks::on_frame_recv);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, Callbacks::on_data);
    nghttp2_session_callbacks_set_on_stream_close_callback(cb, Callbacks::on_close);
    const int rv = nghttp2_session_client_new(&ng_, cb, this);
    nghttp2_session_callbacks_del(cb);
    if (rv != 0) throw std::runtime_error("nghttp2_session_client_new");
    nghttp2_submit_settings(ng_, NGHTTP2_FLAG_NONE, settings.data(), settings.size());
}

H2Client::~H2Client() {
    nghttp2_session_del(ng_);
}

int32_t H2Client::request(std::string_view method, std::string_view path, const H2Fields& fields,
                          const std::string* body, bool hold) {
    std::vector<nghttp2_nv> nv{field(":method", method), field(":scheme", "http"),
                               field(":authority", "t"), field(":path", path)};
    for (const auto& [n, v] : fields) nv.push_back(field(n, v));
    nghttp2_data_provider source{};
    source.read_callback = Callbacks::read_body;
    const int32_t id =
        nghttp2_submit_request(ng_, nullptr, nv.data(), nv.size(), body ? &source : nullptr, this);
    if (id < 0) throw std::runtime_error("nghttp2_submit_request");
    if (body) {
        streams_[id].upload = *body;
        streams_[id].held = hold;
    }
    return id;
}

void H2Client::release(int32_t id) {
    streams_[id].held = false;
    nghttp2_session_resume_data(ng_, id);
}

void H2Client::reset(int32_t id, uint32_t code) {
    nghttp2_submit_rst_stream(ng_, NGHTTP2_FLAG_NONE, id, code);
}

void H2Client::ping() {
    nghttp2_submit_ping(ng_, NGHTTP2_FLAG_NONE, nullptr);
}

std::string H2Client::take_output() {
    std::string out;
    for (;;) {
        const uint8_t* frames = nullptr;
        const ssize_t n = nghttp2_session_mem_send(ng_, &frames);
        if (n <= 0) break;
        out.append(reinterpret_cast<const char*>(frames), size_t(n));
    }
    return out;
}

bool H2Client::flush() {
    for (;;) {
        std::string out = take_output();
        if (out.empty()) return !eof_;
        // The server may be writing to us while we write to it: read between writes, so that
        // neither side waits on a full socket for the other.
        std::string_view rest = out;
        const auto deadline = Clock::now() + 5000ms;
        while (!rest.empty()) {
            const ssize_t n =
                ::send(raw_.fd(), rest.data(), rest.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
            if (n > 0) {
                rest.remove_prefix(size_t(n));
                continue;
            }
            if (n < 0 && errno != EAGAIN && errno != EINTR) return false;
            if (remaining_ms(deadline) == 0) return false;
            pollfd p{raw_.fd(), POLLIN | POLLOUT, 0};
            poll(&p, 1, remaining_ms(deadline));
            if ((p.revents & POLLIN) && !read_once(0ms) && eof_) return false;
        }
    }
}

bool H2Client::read_once(Millis wait) {
    if (eof_) return false;
    pollfd p{raw_.fd(), POLLIN, 0};
    if (poll(&p, 1, int(wait.count())) <= 0) return false;
    uint8_t buf[64 * 1024];
    const ssize_t n = recv(raw_.fd(), buf, sizeof buf, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return true;
    if (n <= 0) {
        eof_ = true;
        return false;
    }
    const ssize_t used = nghttp2_session_mem_recv(ng_, buf, size_t(n));
    if (used < 0) throw std::runtime_error(std::string("client: ") + nghttp2_strerror(int(used)));
    return true;
}

bool H2Client::run_until(const std::function<bool()>& done, Millis timeout) {
    const auto deadline = Clock::now() + timeout;
    for (;;) {
        flush();
        if (done()) return true;
        const int left = remaining_ms(deadline);
        if (left == 0 || eof_) return false;
        // `done` may wait on the server's threads rather than on bytes (a handler's state): it
        // is looked at again at least this often.
        read_once(Millis(std::min(left, 10)));
    }
}

bool H2Client::sync(Millis timeout) {
    const int want = pings_acked_ + 1;
    ping();
    return run_until([&] { return pings_acked_ >= want; }, timeout);
}

bool H2Client::finish(int32_t id, Millis timeout) {
    return run_until([&] { return streams_[id].closed; }, timeout);
}

bool H2Client::wait_eof(Millis timeout) {
    run_until([] { return false; }, timeout);
    return eof_;
}

}  // namespace rivet::engine::testing
