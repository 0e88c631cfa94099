// The coroutine toolbox in one include: what a handler (or any rivet::Task) can wait for
// without blocking its loop.
//
//   rivet/async.hpp       sleep, ready/readable/writable on a descriptor, on_workers
//   rivet/fd_watch.hpp    FdWatch: a descriptor waited on again and again, no epoll_ctl per wait
//   rivet/completion.hpp  until_complete + Completion: an awaitable of one's own, cancel-safe
//   rivet/when.hpp        when_all, when_any, with_timeout
//   rivet/sync.hpp        Semaphore, Event, Channel
//   rivet/spawn.hpp       spawn: a background task owned by the app
#pragma once

#include <rivet/async.hpp>
#include <rivet/completion.hpp>
#include <rivet/fd_watch.hpp>
#include <rivet/spawn.hpp>
#include <rivet/sync.hpp>
#include <rivet/task.hpp>
#include <rivet/when.hpp>
