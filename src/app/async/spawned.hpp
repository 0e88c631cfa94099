// The coroutines rivet::spawn started on one loop (rivet/spawn.hpp), so that the app can
// cancel those still running when it stops.
#pragma once

#include <coroutine>
#include <unordered_set>

#include <rivet/task.hpp>

namespace rivet::app {

class SpawnedTask;

class SpawnedTasks {
public:
    SpawnedTasks() = default;
    SpawnedTasks(const SpawnedTasks&) = delete;
    SpawnedTasks& operator=(const SpawnedTasks&) = delete;
    ~SpawnedTasks();  // cancels what is left (the loop has ended)

    void start(std::coroutine_handle<detail::Promise<void>> frame);  // on the loop
    void cancel_all();                                               // on the loop

private:
    friend class SpawnedTask;
    std::unordered_set<SpawnedTask*> tasks_;
};

}  // namespace rivet::app
