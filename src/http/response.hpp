// The response value type is public (handlers build it); the http layer serializes it.
#pragma once

#include <rivet/response.hpp>

namespace rivet::http {
using Response = rivet::Response;
using BodyProducer = rivet::BodyProducer;
using FileRange = rivet::FileRange;
}  // namespace rivet::http
