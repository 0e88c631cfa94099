// Listening sockets inherited through the systemd socket-activation protocol: LISTEN_PID (the
// process they are meant for), LISTEN_FDS=n (descriptors 3 .. 3+n-1) and LISTEN_FDNAMES
// (name:name:...). A systemd .socket unit starts rivet this way, and so does an in-place upgrade
// (server/upgrade.hpp), which names the admin listener's sockets "admin", the TLS listener's
// "https" and the others "http".
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace rivet::server {

// The listening sockets by what they serve: what a new process inherits, and what an upgrade
// hands over (in this order: http, admin, https).
struct InheritedListeners {
    std::vector<int> http;   // every socket not named "admin" or "https" (systemd names them
                             // after the unit)
    std::vector<int> admin;  // FileDescriptorName=admin: the admin endpoints' listener
    std::vector<int> https;  // FileDescriptorName=https: the TLS listener
    bool empty() const { return http.empty() && admin.empty() && https.empty(); }
    size_t size() const { return http.size() + admin.size() + https.size(); }
};

// LISTEN_FDNAMES's value for handing `l` over in that order ("http:http:admin:https").
std::string listen_fdnames(const InheritedListeners& l);

// The three variables as found (nullopt: unset).
struct ActivationEnv {
    std::optional<std::string> listen_pid, listen_fds, listen_fdnames;
};

// Parses and checks the variables for process `self`: which descriptors, under which names.
// Nothing is inherited when LISTEN_FDS is unset, or when LISTEN_PID names another process (the
// variables were meant for it, as systemd says). Malformed values, a name count that does not
// match, and too many descriptors are refused with `error` set.
InheritedListeners parse_activation(const ActivationEnv& env, pid_t self, std::string& error);

// Checks that `fd` is a listening TCP socket (IPv4 or IPv6); empty when it is, else why not.
std::string check_listener(int fd);

// For main(): reads the variables, removes them from the environment (so that no child inherits
// them), checks every descriptor with check_listener and marks it close-on-exec. On an error,
// nothing is returned and `error` says which descriptor or variable is wrong.
InheritedListeners take_inherited_listeners(std::string& error);

}  // namespace rivet::server
