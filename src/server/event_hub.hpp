// EventHub: the open Server-Sent Event streams of one kind (the demo's /events), to send an
// event to all of them from any thread. Closed streams are forgotten as they are met.
#pragma once

#include <cstddef>
#include <mutex>
#include <string_view>
#include <vector>

#include <rivet/event_stream.hpp>

namespace rivet::server {

class EventHub {
public:
    // Kept until it closes. Any thread.
    void add(const EventStream& stream);
    // Sends one event to every open stream; returns how many took it within their bound (a
    // stream past it still gets it queued: see EventStream::send). Any thread.
    size_t publish(std::string_view event, std::string_view data, std::string_view id = {});
    size_t size() const;  // streams kept (some may have closed since)

private:
    std::vector<EventStream> open_streams();  // prunes the closed ones

    mutable std::mutex mutex_;
    std::vector<EventStream> streams_;
};

}  // namespace rivet::server
