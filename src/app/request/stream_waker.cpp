// rivet::StreamWaker (rivet/stream.hpp) and the producers' conversion to the engine's form.
#include "app/request/stream_access.hpp"

namespace rivet {

void StreamWaker::wake() const {
    if (link_) engine::StreamWaker(link_).wake();
}

void StreamWaker::abort() const {
    if (link_) engine::StreamWaker(link_).abort();
}

bool StreamWaker::closed() const {
    return !link_ || link_->closed.load(std::memory_order_acquire);
}

}  // namespace rivet

namespace rivet::app {

namespace {

engine::Produced engine_status(StreamStatus s) {
    switch (s) {
        case StreamStatus::More:
            return engine::Produced::More;
        case StreamStatus::Waiting:
            return engine::Produced::Waiting;
        case StreamStatus::Done:
            break;
    }
    return engine::Produced::Done;
}

}  // namespace

std::shared_ptr<engine::StreamProducer> engine_stream(const Response& r) {
    if (const auto& p = r.producer()) {
        // The pull form never waits: true is More, false is Done.
        return std::make_shared<engine::StreamProducer>(
            [p](std::string& out, const engine::StreamWaker&) {
                return (*p)(out) ? engine::Produced::More : engine::Produced::Done;
            });
    }
    if (const auto& p = r.waiting_producer()) {
        // The public waker is made once, on the first call: the link is the same on every one.
        return std::make_shared<engine::StreamProducer>(
            [p, waker = StreamWaker()](std::string& out, const engine::StreamWaker& link) mutable {
                if (!waker) waker = detail::WakerAccess::make(link.link());
                return engine_status((*p)(out, waker));
            });
    }
    return nullptr;
}

}  // namespace rivet::app
