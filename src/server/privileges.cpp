#include "server/privileges.hpp"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace rivet::server {

TargetUser resolve_user(const std::string& name, std::string& error) {
    TargetUser t;
    t.name = name;
    std::vector<char> buf(16384);
    passwd pw{};
    passwd* found = nullptr;
    int rc = getpwnam_r(name.c_str(), &pw, buf.data(), buf.size(), &found);
    if (rc != 0 || !found) {
        error = "--user " + name + ": " + (rc ? std::strerror(rc) : "no such user");
        return t;
    }
    t.uid = pw.pw_uid;
    t.gid = pw.pw_gid;
    t.already = geteuid() == t.uid && getuid() == t.uid && getegid() == t.gid;
    if (!t.already && geteuid() != 0)
        error = "--user " + name + ": only root can change to another user (running as uid " +
                std::to_string(geteuid()) + ")";
    return t;
}

std::string drop_privileges(const TargetUser& user) {
    if (user.already) return {};
    auto failed = [](const char* what) { return std::string(what) + ": " + std::strerror(errno); };
    // Supplementary groups first (root's would stay otherwise), then the group while we may
    // still change it, then the user, which ends the right to change anything.
    // glibc applies setgroups/setgid/setuid to every thread of the process (the "setxid"
    // signal), so the I/O loops and workers already running change with this one.
    if (initgroups(user.name.c_str(), user.gid) != 0) return failed("initgroups");
    if (setgid(user.gid) != 0) return failed("setgid");
    if (setuid(user.uid) != 0) return failed("setuid");
    if (user.uid != 0 && (setuid(0) == 0 || seteuid(0) == 0))
        return "root could be regained after setuid(" + std::to_string(user.uid) + ")";
    if (getuid() != user.uid || geteuid() != user.uid || getgid() != user.gid ||
        getegid() != user.gid)
        return "the user or group did not change";
    return {};
}

}  // namespace rivet::server
