#include "server/pid_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>

namespace rivet::server {

std::string write_pid_file(const std::string& path, pid_t pid) {
    std::string temp = path + ".tmp." + std::to_string(getpid());
    std::string text = std::to_string(pid) + "\n";
    // The directory may be shared (/tmp, /run): another user could have put a symbolic link at
    // the temporary name, to have us overwrite what it points at. Never follow one: remove
    // whatever is there (a file of ours left by a crash, or a planted link), then create anew.
    unlink(temp.c_str());
    int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) return "cannot write the pid file " + temp + ": " + std::strerror(errno);
    bool ok = write(fd, text.data(), text.size()) == ssize_t(text.size());
    int err = errno;
    if (close(fd) < 0 && ok) {
        ok = false;
        err = errno;
    }
    if (ok && rename(temp.c_str(), path.c_str()) == 0) return "";
    if (ok) err = errno;
    unlink(temp.c_str());
    return "cannot write the pid file " + path + ": " + std::strerror(err);
}

pid_t read_pid_file(const std::string& path, std::string& error) {
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        error = "cannot read the pid file " + path + ": " + std::strerror(errno);
        return 0;
    }
    char buf[32];
    ssize_t n = read(fd, buf, sizeof buf);
    close(fd);
    size_t len = n > 0 ? size_t(n) : 0;
    while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' ')) --len;
    pid_t pid = 0;
    auto r = std::from_chars(buf, buf + len, pid);
    if (len == 0 || r.ec != std::errc() || r.ptr != buf + len || pid <= 0) {
        error = "the pid file " + path + " holds no process id";
        return 0;
    }
    return pid;
}

void remove_pid_file_if_ours(const std::string& path, pid_t pid) {
    std::string ignored;
    if (read_pid_file(path, ignored) == pid) unlink(path.c_str());
}

}  // namespace rivet::server
