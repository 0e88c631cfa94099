// rivet::spawn: a coroutine that runs in the background on an I/O loop, owned by the app.
//
//   rivet::spawn(refresh_cache_every(30s));                 // from a handler: on its loop
//   rivet::spawn(app.loop(1), listen_for_changes(db));      // from any thread, while running
//
// The task starts on the loop's next turn and runs as any coroutine there (it may wait on
// everything in rivet/async.hpp, rivet/when.hpp, rivet/sync.hpp). Nobody awaits it: an exception
// that escapes it is written to stderr. When the app stops, each task still running is cancelled
// (its frame destroyed at its suspension: put clean-up in destructors) before the drain starts.
// Tasks spawned during the drain are cancelled once the loops have ended.
#pragma once

#include <coroutine>

#include <rivet/async.hpp>
#include <rivet/event_loop.hpp>
#include <rivet/task.hpp>

namespace rivet {

namespace detail {
// Out of line (src/app/async/spawned.cpp). From any thread; off the loop it is posted there.
void spawn_frame(EventLoop& loop, std::coroutine_handle<Promise<void>> frame);
}  // namespace detail

inline void spawn(EventLoop& loop, Task<> task) {
    detail::spawn_frame(loop, detail::TaskAccess::release(task));
}
// On the calling coroutine's (or posted function's) loop; std::logic_error off a loop.
inline void spawn(Task<> task) {
    spawn(detail::current_loop(), std::move(task));
}

}  // namespace rivet
