// The loop's hot system calls without libc's thread-cancellation bookkeeping.
//
// read(2), send(2), sendmsg(2) and epoll_wait(2) are cancellation points: in a process with
// threads, glibc's wrappers switch the calling thread to asynchronous cancellation around each
// call and back, two atomic updates and some 85 instructions a call. A keep-alive request makes
// two such calls (its read and its send), and the bookkeeping was about 4% of its user space.
// rivet never cancels a thread (it has no pthread_cancel), so these go through syscall(2), which
// is not a cancellation point: the same arguments, result and errno, without the bookkeeping.
#pragma once

#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <csignal>
#include <cstddef>

namespace rivet::net {

inline ssize_t read_socket(int fd, void* buf, size_t size) {
    return ::syscall(SYS_read, fd, buf, size);
}

inline ssize_t send_socket(int fd, const void* buf, size_t size, int flags) {
    return ::syscall(SYS_sendto, fd, buf, size, flags, nullptr, 0);
}

inline ssize_t sendmsg_socket(int fd, const msghdr* msg, int flags) {
    return ::syscall(SYS_sendmsg, fd, msg, flags);
}

// epoll_wait(2) as epoll_pwait(2) with no signal mask, which every architecture has.
inline int wait_events(int epfd, epoll_event* events, int max, int timeout_ms) {
    return int(::syscall(SYS_epoll_pwait, epfd, events, max, timeout_ms, nullptr, _NSIG / 8));
}

}  // namespace rivet::net
