// The demo endpoints of the rivet executable: /hello, /echo, /fibonacci, /json, /calc, /work,
// /headers, /cookies, /healthz and the demo page at /.
#pragma once

#include <string>

#include <rivet/app.hpp>

namespace rivet::server {

struct DemoOptions {
    std::string root = "public";  // the demo page is root/index.html
};

void add_demo_routes(App& app, const DemoOptions& options);

}  // namespace rivet::server
