#include <rivet/http_error.hpp>
#include <rivet/middleware.hpp>

#include <utility>

namespace rivet {

HttpError::HttpError(int status, std::string message)
    : std::runtime_error(std::move(message)), status_(status) {
    if (status < 400 || status > 599)
        throw std::invalid_argument("an HttpError's status must be 400..599");
}

namespace {

class BeforeFunction final : public Middleware {
public:
    explicit BeforeFunction(std::function<bool(Request&, Response&)> fn) : fn_(std::move(fn)) {}
    bool before(Request& req, Response& res) override { return fn_(req, res); }

private:
    std::function<bool(Request&, Response&)> fn_;
};

class AfterFunction final : public Middleware {
public:
    explicit AfterFunction(std::function<void(const Request&, Response&)> fn)
        : fn_(std::move(fn)) {}
    void after(const Request& req, Response& res) override { fn_(req, res); }

private:
    std::function<void(const Request&, Response&)> fn_;
};

}  // namespace

std::shared_ptr<Middleware> before(std::function<bool(Request&, Response&)> fn) {
    return std::make_shared<BeforeFunction>(std::move(fn));
}

std::shared_ptr<Middleware> after(std::function<void(const Request&, Response&)> fn) {
    return std::make_shared<AfterFunction>(std::move(fn));
}

}  // namespace rivet
