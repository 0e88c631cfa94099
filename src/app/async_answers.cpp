#include "app/async_answers.hpp"

#include <rivet/http_error.hpp>

#include "app/server_options.hpp"

namespace rivet::app {

Response OpsAnswers::error_response(Operations& ops, std::exception_ptr error, const Request& req,
                                    unsigned loop) {
    try {
        std::rethrow_exception(error);
    } catch (const HttpError& e) {
        Response res(e.status());
        for (const auto& [name, value] : e.headers()) res.header(name, value);
        res.text(std::string(e.message()) + "\n");
        return res;
    } catch (const std::exception& e) {
        ops.handler_threw(loop, req.path(), e.what());
    } catch (...) {
        ops.handler_threw(loop, req.path(), nullptr);
    }
    Response res(500);
    res.text("Internal Server Error\n");
    return res;
}

void OpsAnswers::answer(AsyncCall& call, engine::Exchange* now) {
    if (call.error) {
        call.response.emplace(error_response(*ops_, call.error, *call.request, call.loop));
        call.error = nullptr;
    }
    if (!call.response) call.response.emplace(500).text("Internal Server Error\n");
    if (now) return now->respond(view_of(*call.response));  // serve() logs it as any
    ops_->finish_offloaded(*call.request, call.trace, *call.response);
    call.later.complete(reply_of(std::move(*call.response)));
}

void OpsAnswers::cancelled(AsyncCall& call) {
    ops_->count_handler_cancelled(call.loop);
}

}  // namespace rivet::app
