// --user NAME / server.user: bind ports 80 and 443 as root, then serve as NAME.
#pragma once

#include <sys/types.h>
#include <string>

namespace rivet::server {

// The account --user names, looked up before anything is bound.
struct TargetUser {
    std::string name;
    uid_t uid = 0;
    gid_t gid = 0;
    // Already running as that user: nothing to drop (so a config that says "user" also works
    // in a container started as that user).
    bool already = false;
};

// Checks at start that `name` exists and that we can become it (root, or already it).
// Empty `error` when good.
TargetUser resolve_user(const std::string& name, std::string& error);

// initgroups, setgid, setuid, in that order, then checks that root cannot be regained.
// Returns what went wrong, empty when the process now runs as `user`.
std::string drop_privileges(const TargetUser& user);

}  // namespace rivet::server
