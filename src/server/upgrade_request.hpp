// `rivet --upgrade --pid-file PATH | --config FILE [--timeout-ms N]`: asks the rivet named in the
// pid file (the file's, or the configuration's server.pid_file) for an in-place upgrade
// (SIGUSR2) and waits until it is done. Success: the file names a new, live process (the old one
// drains and exits by itself). Failure: the old process rewrote the file with its own pid again
// (the new one failed, the old one still serves), or the old one is gone, or the time ran out.
// Refused at once (nothing sent) while an upgrade is in progress: the server would refuse it.
// Exit 0 on success, 1 on failure, 2 on a malformed command line; one line says which.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace rivet::server {

// `args` follow "--upgrade". Returns the exit status.
int run_upgrade_request(const std::vector<std::string>& args);

// Whether process `pid` blocks or catches SIGUSR2, from /proc/PID/status: a serving rivet
// does (App::run waits for it); another process that a stale pid file names would be killed
// by it. True when /proc cannot tell.
bool handles_sigusr2(pid_t pid);

// A child process of `parent` (from /proc), 0 when it has none. A serving rivet has one only
// while an upgrade is in progress: the new process it started (server/upgrade.hpp).
pid_t child_of(pid_t parent);

}  // namespace rivet::server
