// --pid-file PATH / server.pid_file: the serving process's id, for `rivet --upgrade`, init
// scripts and systemd's PIDFile=. Written once serving (after privileges are dropped, so its
// directory must be writable by the serving user), replaced atomically (a reader never sees half
// a file), and removed at exit only while it still names this process: after an in-place
// upgrade it names the new one.
#pragma once

#include <sys/types.h>

#include <string>

namespace rivet::server {

// Writes "PID\n" to a temporary file beside `path`, then renames it over `path`. Returns what
// went wrong, empty on success.
std::string write_pid_file(const std::string& path, pid_t pid);

// The pid in `path`; 0 with `error` set when the file cannot be read or holds no pid.
pid_t read_pid_file(const std::string& path, std::string& error);

// Removes `path` if it names `pid`.
void remove_pid_file_if_ours(const std::string& path, pid_t pid);

}  // namespace rivet::server
