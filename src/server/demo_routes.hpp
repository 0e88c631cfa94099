// The demo endpoints of the rivet executable: /hello, /echo, /fibonacci, /json, /calc, /work,
// /headers, /cookies, /upload-form, /upload-file, /wait, /cpu, /later, /events,
// /stream/waiting, /trailers, and the files of the root (the demo site) at /, compressed on the
// fly.
#pragma once

#include <memory>
#include <string>

#include <rivet/app.hpp>

namespace rivet::server {

struct DemoOptions {
    std::string root = "public";  // served at /; the demo page is root/index.html
    // The demo site lists directories without an index, and browsers revalidate every time
    // (a 304 when nothing changed), so edits to the files show at once.
    StaticOptions files = [] {
        StaticOptions o;
        o.listing = true;
        o.cache_control = "no-cache";
        return o;
    }();
    // Runs /calc, /work and large /fibonacci on the I/O loop that read the request instead of
    // the worker pool: one of the concurrency models bench/models.py compares. A slow handler
    // then stalls every connection of its loop, which is what the comparison shows.
    bool inline_heavy = false;
    // Compresses the responses of every route (rivet::compression, its defaults) for clients
    // that accept it; --no-compression or "compression": {"enabled": false} turns it off.
    bool compression = true;
};

void add_demo_routes(App& app, const DemoOptions& options);
// /wait, /cpu and /later: handlers that wait without holding their loop (demo_waiting_routes.cpp).
void add_waiting_routes(App& app);
// /events (Server-Sent Events, subscribed to the topic "chat") and /stream/waiting
// (demo_event_routes.cpp).
void add_event_routes(App& app);
// /ws/echo and /ws/chat: WebSockets (demo_push_routes.cpp); every chat message is published
// to the topic "chat", which the /events clients get as a `chat` event.
void add_push_routes(App& app);
// /upload-form: an HTML form with files stored in a temporary directory; /upload-file: a body
// stored as it is (demo_form_routes.cpp).
void add_form_routes(App& app);
// /trailers: a streamed body with its SHA-256 as a trailer field (demo_trailer_routes.cpp).
void add_trailer_routes(App& app);

}  // namespace rivet::server
