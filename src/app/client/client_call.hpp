// What HttpClient's buffered and streamed calls share: the public request and options made the
// client layer's, its errors made HttpClientError, the current loop.
#pragma once

#include <rivet/http_client.hpp>

#include <exception>
#include <optional>

#include "client/transfer.hpp"
#include "net/loop.hpp"

namespace rivet::app {

// nullopt with `error` (an HttpClientError) when the URL is not one the client can fetch.
std::optional<client::Request> client_request(ClientRequest&& request,
                                              const HttpClientOptions& defaults,
                                              std::exception_ptr& error);
std::exception_ptr client_error(const client::Error& e);
net::Loop& client_loop();  // the calling coroutine's loop; std::logic_error off one

}  // namespace rivet::app
