#define _GNU_SOURCE
/* The floor: the least a server can do per keep-alive request on this kernel. One thread, epoll
 * (level-triggered), read whatever arrived, answer one fixed 13-byte response per "\r\n\r\n" seen,
 * in one write. No parsing, no limits, no timers: not a server, a measuring stick.
 *
 * Copied verbatim (only this paragraph added) from the project's shared measuring stick,
 * /work/shared/floor/floor.c (see its README.md there); kept here so bench/ stands alone. */
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

static const char RESP[] = "HTTP/1.1 200 OK\r\nServer: floor\r\nDate: Sun, 22 Nov 2026 00:00:00 GMT\r\n"
                           "Content-Type: text/plain\r\nContent-Length: 13\r\n\r\nHello, World!";

int main(int argc, char **argv) {
  int port = argc > 1 ? atoi(argv[1]) : 18099;
  int ls = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), one = 1;
  setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(0x7f000001)};
  if (bind(ls, (struct sockaddr *)&a, sizeof a) || listen(ls, 4096)) { perror("bind/listen"); return 1; }
  int ep = epoll_create1(0);
  struct epoll_event ev = {.events = EPOLLIN, .data.fd = ls}, evs[512];
  epoll_ctl(ep, EPOLL_CTL_ADD, ls, &ev);
  static char buf[65536], out[16 * 1024 * 16];
  const size_t rl = sizeof RESP - 1;
  for (;;) {
    int n = epoll_wait(ep, evs, 512, -1);
    for (int i = 0; i < n; i++) {
      int fd = evs[i].data.fd;
      if (fd == ls) {
        int c;
        while ((c = accept4(ls, 0, 0, SOCK_NONBLOCK)) >= 0) {
          setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
          struct epoll_event ce = {.events = EPOLLIN, .data.fd = c};
          epoll_ctl(ep, EPOLL_CTL_ADD, c, &ce);
        }
        continue;
      }
      ssize_t r = read(fd, buf, sizeof buf);
      if (r <= 0) { close(fd); continue; }
      size_t k = 0;
      for (ssize_t j = 3; j < r; j++)
        if (buf[j] == '\n' && buf[j - 1] == '\r' && buf[j - 2] == '\n' && buf[j - 3] == '\r' && k < 256) {
          memcpy(out + k * rl, RESP, rl);
          k++;
        }
      if (k && write(fd, out, k * rl) < 0) close(fd);
    }
  }
}
