// The loop's hot system calls without libc's thread-cancellation bookkeeping.
//
// read(2), send(2), sendmsg(2) and epoll_wait(2) are cancellation points: in a process with
// threads, glibc's wrappers switch the calling thread to asynchronous cancellation around each
// call and back: two atomic updates and about 30 instructions a call. A keep-alive request makes
// two or three (its read, its send, and the loop's wait when it was the only one ready): about
// 3% of its user-space instructions, and four or six locked ones.
// rivet never cancels a thread (it has no pthread_cancel), so these go through syscall(2), which
// is not a cancellation point: the same arguments, result and errno, without the bookkeeping.
//
// Built with a sanitizer, they are the libc calls again, which its interceptors see: ASan checks
// the buffers they fill and read, and TSan takes what passes through a socket as ordering the
// threads at its two ends (without that, the tests' threads race with the loops they talk to).
#pragma once

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define RIVET_SOCKET_IO_LIBC 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define RIVET_SOCKET_IO_LIBC 1
#endif
#endif

#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <csignal>
#include <cstddef>

namespace rivet::net {

#ifdef RIVET_SOCKET_IO_LIBC

inline ssize_t read_socket(int fd, void* buf, size_t size) {
    return ::read(fd, buf, size);
}
inline ssize_t send_socket(int fd, const void* buf, size_t size, int flags) {
    return ::send(fd, buf, size, flags);
}
inline ssize_t sendmsg_socket(int fd, const msghdr* msg, int flags) {
    return ::sendmsg(fd, msg, flags);
}
inline int wait_events(int epfd, epoll_event* events, int max, int timeout_ms) {
    return ::epoll_wait(epfd, events, max, timeout_ms);
}

#else

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

#endif

}  // namespace rivet::net
