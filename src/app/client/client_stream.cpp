// rivet::ClientStream: a response whose body is read in pieces. The Transfer is shared by the
// stream (and each read's frame) through ClientStreamState; before the head arrives, the
// starting coroutine's on_cancel holds it too, so a cancel then abandons the request.
#include <rivet/http_client.hpp>

#include <stdexcept>

#include "app/client/client_call.hpp"
#include "client/transfer.hpp"
#include "http/request_parser.hpp"

namespace rivet {

namespace detail {

struct ClientStreamState {
    std::unique_ptr<client::Transfer> transfer;

    static ClientStream make(std::shared_ptr<ClientStreamState> s, client::Response&& head) {
        ClientStream out;
        out.status = head.status;
        out.reason = std::move(head.reason);
        out.headers = std::move(head.headers);
        out.url = std::move(head.url);
        out.reused_connection = head.reused;
        out.state_ = std::move(s);
        return out;
    }
};

void start_client_stream(Completion<ClientStream> c, ClientRequest&& request,
                         const HttpClientOptions& defaults) {
    net::Loop& loop = app::client_loop();
    std::exception_ptr error;
    auto r = app::client_request(std::move(request), defaults, error);
    if (!r) return c.fail(error);
    r->stream = true;
    auto state = std::make_shared<ClientStreamState>();
    std::weak_ptr<ClientStreamState> weak = state;  // the Transfer holds this callback
    state->transfer = client::Transfer::start(loop, std::move(*r), [c, weak](client::Outcome o) {
        if (o.error) return c.fail(app::client_error(*o.error));
        if (auto s = weak.lock()) c.done(ClientStreamState::make(s, std::move(*o.response)));
    });
    c.on_cancel([state] { state->transfer.reset(); });
}

void start_stream_read(Completion<std::optional<std::string>> c,
                       const std::shared_ptr<ClientStreamState>& state) {
    if (!state || !state->transfer)
        throw std::logic_error("rivet::ClientStream::read on a stream that holds no response");
    client::Transfer& t = *state->transfer;
    // Answers `c` from what the Transfer has; false: nothing yet.
    auto answer = [&t, c]() {
        switch (t.body_state()) {
            case client::Transfer::BodyState::More: {
                std::string piece = t.take_body();
                if (piece.empty()) return false;
                c.done(std::optional<std::string>(std::move(piece)));
                return true;
            }
            case client::Transfer::BodyState::End:
                c.done(std::optional<std::string>());
                return true;
            case client::Transfer::BodyState::Failed:
                c.fail(app::client_error(*t.body_error()));
                return true;
        }
        return true;
    };
    if (answer()) return;
    // The Transfer calls this once, when it has something; it says so only with bytes, the end
    // or a failure, so the answer is there.
    t.on_body([answer] { answer(); });
    // The reader left (its coroutine cancelled): the stream itself may go on being read.
    std::weak_ptr<ClientStreamState> weak = state;
    c.on_cancel([weak] {
        if (auto s = weak.lock(); s && s->transfer) s->transfer->on_body(nullptr);
    });
}

}  // namespace detail

ClientStream::~ClientStream() {
    if (state_) state_->transfer.reset();  // before the end: abandoned, its connection closed
}

std::optional<std::string_view> ClientStream::header(std::string_view name) const {
    for (const auto& [n, v] : headers)
        if (http::iequals(n, name)) return std::string_view(v);
    return std::nullopt;
}

}  // namespace rivet
