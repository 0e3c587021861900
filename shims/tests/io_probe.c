/* io_probe: drives the I/O shim through a script of socket calls and prints one line per step.
 *
 *   io_probe STEP...      e.g. io_probe conn nb send:send:5000 peer-recv
 *
 * The probe's own end of every connection is the client side (libc calls: the shim sees them);
 * the peer side uses raw system calls, so the shim never touches it. selftest_io.py compares
 * the printed lines whole. Steps:
 *   conn                 a new TCP connection on loopback (current from now on): "conn -> INDEX fd FD"
 *   nb                   make the current connection non-blocking
 *   send:API:LEN         API = write send sendnosig sendto sendmsg writev: "-> N" or "-> ERRNO_NAME"
 *   recv:API:LEN         API = read read_chk recv recvfrom recvmsg readv; bytes are checked
 *   peer-send:LEN        the peer sends LEN pattern bytes
 *   peer-recv            the peer reads what has arrived: "-> N ok|BAD"
 *   repeat:K:STEP        run STEP K times on one line
 *   reuse-pipe:LEN       put a pipe on the current socket's number (closing it), write LEN bytes to it
 *   reuse-sock           close the current descriptor and connect again (the number is reused)
 *   udp:LEN              send LEN bytes over a connected UDP socket
 *   sigpipe:ignore       ignore SIGPIPE from now on
 *   env                  LD_PRELOAD as this process sees it
 *   spawn                run `io_probe conn send:write:5000` as a child and print its lines
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

extern ssize_t __read_chk(int, void *, size_t, size_t);

static int listener = -1;
static struct sockaddr_in listen_addr;
static int client = -1, peer = -1;
static unsigned long sent_off, peer_recv_off, peer_sent_off, recv_off; /* pattern offsets */
static char self_path[4096];

static unsigned char pattern(unsigned long i) { return (unsigned char)(i % 251); }

static void die(const char *what) {
  fprintf(stderr, "io_probe: %s: %s\n", what, strerror(errno));
  exit(2);
}

static void listen_once(void) {
  if (listener >= 0) return;
  listener = socket(AF_INET, SOCK_STREAM, 0);
  listen_addr.sin_family = AF_INET;
  listen_addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof listen_addr;
  if (bind(listener, (struct sockaddr *)&listen_addr, len) || listen(listener, 16) ||
      getsockname(listener, (struct sockaddr *)&listen_addr, &len))
    die("listen");
}

static int connect_pair(int *peer_out) {
  listen_once();
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0 || connect(fd, (struct sockaddr *)&listen_addr, sizeof listen_addr)) die("connect");
  *peer_out = accept(listener, NULL, NULL);
  if (*peer_out < 0) die("accept");
  sent_off = peer_recv_off = peer_sent_off = recv_off = 0;
  return fd;
}

static long conn_index;

static void result(ssize_t r) {
  if (r >= 0) printf(" %zd", r);
  else printf(" %s", strerrorname_np(errno));
}

static ssize_t do_send(const char *api, size_t len) {
  char *buf = malloc(len);
  for (size_t i = 0; i < len; i++) buf[i] = (char)pattern(sent_off + i);
  struct iovec iov[2] = {{buf, len / 2}, {buf + len / 2, len - len / 2}};
  struct msghdr msg = {.msg_iov = iov, .msg_iovlen = 2};
  ssize_t r = -1;
  if (!strcmp(api, "write")) r = write(client, buf, len);
  else if (!strcmp(api, "send")) r = send(client, buf, len, 0);
  else if (!strcmp(api, "sendnosig")) r = send(client, buf, len, MSG_NOSIGNAL);
  else if (!strcmp(api, "sendto")) r = sendto(client, buf, len, 0, NULL, 0);
  else if (!strcmp(api, "sendmsg")) r = sendmsg(client, &msg, 0);
  else if (!strcmp(api, "writev")) r = writev(client, iov, 2);
  else { fprintf(stderr, "io_probe: unknown send api %s\n", api); exit(2); }
  if (r > 0) sent_off += (unsigned long)r;
  free(buf);
  return r;
}

static ssize_t do_recv(const char *api, size_t len, int *bad) {
  char *buf = malloc(len);
  struct iovec iov[2] = {{buf, len / 2}, {buf + len / 2, len - len / 2}};
  struct msghdr msg = {.msg_iov = iov, .msg_iovlen = 2};
  ssize_t r = -1;
  if (!strcmp(api, "read")) r = read(client, buf, len);
  else if (!strcmp(api, "read_chk")) r = __read_chk(client, buf, len, len);
  else if (!strcmp(api, "recv")) r = recv(client, buf, len, 0);
  else if (!strcmp(api, "recvfrom")) r = recvfrom(client, buf, len, 0, NULL, NULL);
  else if (!strcmp(api, "recvmsg")) r = recvmsg(client, &msg, 0);
  else if (!strcmp(api, "readv")) r = readv(client, iov, 2);
  else { fprintf(stderr, "io_probe: unknown recv api %s\n", api); exit(2); }
  for (ssize_t i = 0; i < r; i++)
    if ((unsigned char)buf[i] != pattern(recv_off + (unsigned long)i)) *bad = 1;
  if (r > 0) recv_off += (unsigned long)r;
  free(buf);
  return r;
}

/* The peer's side, in raw system calls: invisible to the shim. */
static void peer_send(size_t len) {
  char buf[1024];
  while (len > 0) {
    size_t n = len < sizeof buf ? len : sizeof buf;
    for (size_t i = 0; i < n; i++) buf[i] = (char)pattern(peer_sent_off + i);
    long r = syscall(SYS_write, peer, buf, n);
    if (r <= 0) die("peer write");
    peer_sent_off += (unsigned long)r;
    len -= (size_t)r;
  }
}

static void peer_recv(void) {
  char buf[4096];
  long total = 0;
  int bad = 0;
  for (;;) {
    long r = syscall(SYS_recvfrom, peer, buf, sizeof buf, MSG_DONTWAIT, NULL, NULL);
    if (r <= 0) break;
    for (long i = 0; i < r; i++)
      if ((unsigned char)buf[i] != pattern(peer_recv_off + (unsigned long)i)) bad = 1;
    peer_recv_off += (unsigned long)r;
    total += r;
  }
  printf(" %ld %s", total, bad ? "BAD" : "ok");
}

static void step(const char *s);

static void repeat(const char *s) {
  char *rest;
  long k = strtol(s, &rest, 10);
  for (long i = 0; i < k; i++) step(rest + 1);
}

static void step(const char *s) {
  char api[32];
  size_t len = 0;
  if (!strcmp(s, "conn")) {
    client = connect_pair(&peer);
    printf(" %ld fd %d", conn_index++, client);
  } else if (!strcmp(s, "nb")) {
    fcntl(client, F_SETFL, fcntl(client, F_GETFL) | O_NONBLOCK);
  } else if (sscanf(s, "send:%31[^:]:%zu", api, &len) == 2) {
    result(do_send(api, len));
  } else if (sscanf(s, "recv:%31[^:]:%zu", api, &len) == 2) {
    int bad = 0;
    result(do_recv(api, len, &bad));
    if (bad) printf(" BAD");
  } else if (sscanf(s, "peer-send:%zu", &len) == 1) {
    peer_send(len);
  } else if (!strcmp(s, "peer-recv")) {
    peer_recv();
  } else if (!strncmp(s, "repeat:", 7)) {
    repeat(s + 7);
  } else if (sscanf(s, "reuse-pipe:%zu", &len) == 1) {
    int p[2];
    if (pipe(p) || dup2(p[1], client) < 0) die("reuse-pipe"); /* dup2 closes the socket */
    close(p[1]);
    char *buf = calloc(1, len);
    printf(" fd %d", client);
    result(write(client, buf, len));
    free(buf);
    close(p[0]);
  } else if (!strcmp(s, "reuse-sock")) {
    close(client); /* the lowest free number: the new socket takes this one again */
    client = connect_pair(&peer);
    printf(" %ld fd %d", conn_index++, client);
  } else if (sscanf(s, "udp:%zu", &len) == 1) {
    int a = socket(AF_INET, SOCK_DGRAM, 0), b = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof addr;
    if (bind(b, (struct sockaddr *)&addr, alen) || getsockname(b, (struct sockaddr *)&addr, &alen) ||
        connect(a, (struct sockaddr *)&addr, alen))
      die("udp");
    char *buf = calloc(1, len);
    result(send(a, buf, len, 0));
    free(buf);
    close(a);
    close(b);
  } else if (!strcmp(s, "sigpipe:ignore")) {
    signal(SIGPIPE, SIG_IGN);
  } else if (!strcmp(s, "env")) {
    const char *v = getenv("LD_PRELOAD");
    printf(" %s", v ? v : "(unset)");
  } else if (!strcmp(s, "spawn")) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
      execl(self_path, self_path, "conn", "send:write:5000", (char *)NULL);
      _exit(127);
    }
    int status;
    waitpid(pid, &status, 0);
    printf(" (child exit %d)", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  } else {
    fprintf(stderr, "io_probe: unknown step %s\n", s);
    exit(2);
  }
}

int main(int argc, char **argv) {
  ssize_t n = readlink("/proc/self/exe", self_path, sizeof self_path - 1);
  self_path[n > 0 ? n : 0] = '\0';
  for (int i = 1; i < argc; i++) {
    printf("%s ->", argv[i]);
    fflush(stdout); /* a step may end the process (SIGPIPE) */
    step(argv[i]);
    printf("\n");
    fflush(stdout);
  }
  return 0;
}
