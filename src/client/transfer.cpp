// Transfer: starting, the request's bytes, and the streamed body's accessors; the state
// machine itself is Transfer::Impl (transfer_impl.hpp), its reading side transfer_read.cpp.
#include "client/transfer.hpp"

#include <algorithm>

#include "client/transfer_impl.hpp"

namespace rivet::client {

namespace {

bool has_field(const Fields& f, std::string_view name) {
    return std::any_of(f.begin(), f.end(),
                       [&](const auto& h) { return http::iequals(h.first, name); });
}

bool valid_value(std::string_view v) {
    return std::none_of(v.begin(), v.end(),
                        [](char c) { return c == '\r' || c == '\n' || c == 0; });
}

}  // namespace

const char* Transfer::Impl::build_request() {
    if (!http::is_token(req.method)) return "invalid method";
    out = req.method + " " + req.url.target + " HTTP/1.1\r\n";
    if (!has_field(req.headers, "host")) out += "Host: " + req.url.authority + "\r\n";
    for (const auto& [name, value] : req.headers) {
        if (!http::is_token(name)) return "invalid field name";
        if (!valid_value(value)) return "invalid field value";
        if (http::iequals(name, "content-length") || http::iequals(name, "transfer-encoding"))
            continue;  // the body's framing is the client's to write
        out += name + ": " + value + "\r\n";
    }
    const bool expects_body = req.method == "POST" || req.method == "PUT" || req.method == "PATCH";
    if (!req.body.empty() || expects_body)
        out += "Content-Length: " + std::to_string(req.body.size()) + "\r\n";
    out += "\r\n";
    out += req.body;
    return nullptr;
}

void Transfer::Impl::step_send() {
    while (out_sent < out.size()) {
        size_t n = 0;
        switch (conn->write(std::string_view(out).substr(out_sent), n)) {
            case Io::Done:
                out_sent += n;
                continue;
            case Io::WantWrite:
                return watch(net::kWritable);
            case Io::WantRead:
                return watch(net::kReadable);
            case Io::Eof:
                return on_eof();
            case Io::Failed:
                return fail(ErrorKind::Closed,
                            "sending to " + req.url.authority + ": " + conn->error);
        }
    }
    phase = Phase::Reading;
    watch(net::kReadable);
    step_read();  // a TLS session may already hold the answer's first records
}

std::unique_ptr<Transfer> Transfer::start(net::Loop& loop, Request request, Done done) {
    auto impl = std::make_unique<Impl>(loop, std::move(request), std::move(done));
    Impl* raw = impl.get();
    std::unique_ptr<Transfer> t(new Transfer(std::move(impl)));
    raw->begin();
    return t;
}

Transfer::Transfer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Transfer::~Transfer() = default;

Transfer::BodyState Transfer::body_state() const {
    if (!impl_->resp.body.empty()) return BodyState::More;
    if (impl_->body_error) return BodyState::Failed;
    return impl_->body_ended ? BodyState::End : BodyState::More;
}

const Error* Transfer::body_error() const {
    return impl_->body_error ? &*impl_->body_error : nullptr;
}

std::string Transfer::take_body() {
    std::string out = std::move(impl_->resp.body);
    impl_->resp.body.clear();
    impl_->resume_reading();
    return out;
}

void Transfer::on_body(std::function<void()> fn) {
    impl_->body_cb = std::move(fn);
}

}  // namespace rivet::client
