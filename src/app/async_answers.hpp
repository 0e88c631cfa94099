// App's end of an asynchronous handler: its Response, or the answer its exception calls for,
// goes out through the Exchange (never waited) or the Deferred, logged and counted like any.
#pragma once

#include "app/async_call.hpp"

namespace rivet::app {

class Operations;

class OpsAnswers final : public AsyncAnswers {
public:
    explicit OpsAnswers(Operations* const& ops) : ops_(ops) {}
    void answer(AsyncCall& call, engine::Exchange* now) override;
    void cancelled(AsyncCall& call) override;

    // What a handler's exception answers: an HttpError its status and message, anything else
    // 500 (logged and counted).
    static Response error_response(Operations& ops, std::exception_ptr error, const Request& req,
                                   unsigned loop);

private:
    Operations* const& ops_;  // App's, made at start()
};

}  // namespace rivet::app
