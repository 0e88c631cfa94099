#include "server/startup_check.hpp"

#include <cerrno>
#include <cstring>

#include <sys/stat.h>

namespace rivet::server {

namespace {

bool is_wildcard(const std::string& host) {
    return host == "0.0.0.0" || host == "::";
}

// The admin listener on the main listener's port: one of the two binds fails at start.
std::string admin_port_clash(const Config& c) {
    const auto& admin = c.run.ops.admin;
    if (admin.admin_port == 0 || admin.admin_port != c.run.port) return {};
    bool overlap =
        admin.admin_host == c.run.host || is_wildcard(admin.admin_host) || is_wildcard(c.run.host);
    if (!overlap) return {};
    return "metrics.admin_port: the admin port " + std::to_string(admin.admin_port) +
           " is the plain HTTP port too (--admin-port, server.port)";
}

// A file rivet creates at start (a log, the pid file) needs its directory; empty when it has
// one, or when `path` is no file ("off", "stdout", "stderr", "": the special targets).
std::string file_problem(const std::string& setting, const std::string& path) {
    if (path.empty() || path == "off" || path == "stdout" || path == "-" || path == "stderr")
        return {};
    size_t slash = path.rfind('/');
    std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0)
        return setting + ": cannot create " + path + ": " + dir + ": " + std::strerror(errno);
    if (!S_ISDIR(st.st_mode))
        return setting + ": cannot create " + path + ": " + dir + " is not a directory";
    if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
        return setting + ": " + path + " is a directory";
    return {};
}

}  // namespace

std::vector<std::string> check_startup(const Config& c) {
    std::vector<std::string> problems;
    for (std::string p :
         {admin_port_clash(c),
          file_problem("logging.access_log (--access-log)", c.run.ops.log.access_log),
          file_problem("logging.error_log (--error-log)", c.run.ops.log.error_log),
          file_problem("server.pid_file (--pid-file)", c.pid_file)})
        if (!p.empty()) problems.push_back(std::move(p));
    return problems;
}

}  // namespace rivet::server
