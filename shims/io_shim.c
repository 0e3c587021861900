/* tlslab I/O shim (LD_PRELOAD): partial, refused and failing socket I/O for the client process.
 *
 * Wraps every call a TLS client moves ciphertext with (send, recv, sendto, recvfrom, sendmsg,
 * recvmsg, read, write, readv, writev and the _FORTIFY __*_chk forms) and acts only on TCP
 * sockets (AF_INET/AF_INET6, SOCK_STREAM): OpenSSL's socket BIO calls read()/write(), the
 * memory-BIO transport send()/recv(), so one shim covers both transports. Settings come from
 * TLSLAB_IO_* environment variables (shims/README.md); counters go to TLSLAB_IO_REPORT or
 * stderr at exit. Each socket is identified by (fd, st_dev, st_ino): descriptors are reused,
 * socket inodes are not, so an fstat per call keeps a reused number from inheriting state.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "shim_report.h"

#define EXPORT __attribute__((visibility("default")))
#define SHIM_FDS 65536 /* descriptors above this pass through untouched (counted as untracked) */

enum mode { MODE_FIXED, MODE_RANDOM, MODE_ONEBYTE };
enum fault { FAULT_NONE, FAULT_RESET, FAULT_EPIPE, FAULT_STALL };
enum dir { DIR_SEND, DIR_RECV };
enum kind { KIND_UNKNOWN, KIND_TCP, KIND_UDP, KIND_OTHER }; /* UDP: only its blocking calls are counted */

static const char *const MODE_NAMES[] = {"fixed", "random", "onebyte"};
static const char *const FAULT_NAMES[] = {"none", "reset", "epipe", "stall"};

/* The run's settings, read once from the environment. */
static struct {
  enum mode mode;
  size_t max[2];          /* largest bytes per call, by direction; 0: no cap */
  unsigned eagain_every;  /* fixed: every Nth call of a socket's direction; random: 1 in N */
  uint64_t seed;
  int seed_given;
  enum fault fault;
  long fault_conn;        /* connection index, 0-based, in connect() order */
  uint64_t fault_byte;    /* bytes that pass in the fault's direction before it fires */
  enum dir fault_dir;
  char report[512];
} cfg;

/* One descriptor's socket, valid while (dev, ino) still names the open file behind fd. */
struct sock {
  dev_t dev;
  ino_t ino;
  enum kind kind;
  long conn;              /* -1 until connect() or the first call */
  uint64_t calls[2], bytes[2], rng[2];
  int broken;             /* the fault fired: recv is end of file, send is EPIPE (stall: its direction EAGAIN) */
};

static struct sock table[SHIM_FDS];
static int dormant; /* not the program named by TLSLAB_SHIM_PROGRAM: pass everything through */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* Counters for the at-exit report. */
static struct {
  uint64_t sockets, connects, calls, send_calls, recv_calls, bytes_sent, bytes_received;
  uint64_t bytes_cut, eagain, eagain_skipped_blocking, faults, untracked;
  /* the loop, counted (never timed): a busy loop is wakeups without progress, a blocked loop a
   * blocking call on a thread that waits in epoll/poll/select (the loop's thread) */
  uint64_t waits, idle_waits, progress, blocking_calls, resolver_calls, loop_threads;
} count;

/* Per thread: whether it is a loop (it has waited), whether its last wake-up has made progress
 * yet, and what it did that would block before it first waited (counted once it does). */
static __thread int loop_thread, woke_idle;
static __thread uint64_t blocking_before_loop, resolving_before_loop;

/* The next layer's functions, found with dlsym(RTLD_NEXT). */
static struct {
  ssize_t (*read)(int, void *, size_t);
  ssize_t (*write)(int, const void *, size_t);
  ssize_t (*readv)(int, const struct iovec *, int);
  ssize_t (*writev)(int, const struct iovec *, int);
  ssize_t (*send)(int, const void *, size_t, int);
  ssize_t (*recv)(int, void *, size_t, int);
  ssize_t (*sendto)(int, const void *, size_t, int, const struct sockaddr *, socklen_t);
  ssize_t (*recvfrom)(int, void *, size_t, int, struct sockaddr *, socklen_t *);
  ssize_t (*sendmsg)(int, const struct msghdr *, int);
  ssize_t (*recvmsg)(int, struct msghdr *, int);
  int (*connect)(int, const struct sockaddr *, socklen_t);
  int (*epoll_wait)(int, struct epoll_event *, int, int);
  int (*epoll_pwait)(int, struct epoll_event *, int, int, const sigset_t *);
  int (*epoll_pwait2)(int, struct epoll_event *, int, const struct timespec *, const sigset_t *);
  int (*poll)(struct pollfd *, nfds_t, int);
  int (*ppoll)(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *);
  int (*select)(int, fd_set *, fd_set *, fd_set *, struct timeval *);
  int (*pselect)(int, fd_set *, fd_set *, fd_set *, const struct timespec *, const sigset_t *);
  int (*getaddrinfo)(const char *, const char *, const struct addrinfo *, struct addrinfo **);
  struct hostent *(*gethostbyname)(const char *);
  struct hostent *(*gethostbyname2)(const char *, int);
  int (*gethostbyname_r)(const char *, struct hostent *, char *, size_t, struct hostent **, int *);
  int (*gethostbyname2_r)(const char *, int, struct hostent *, char *, size_t, struct hostent **, int *);
} real;

static void resolve_real(void) {
  if (real.read) return;
  real.write = dlsym(RTLD_NEXT, "write");
  real.readv = dlsym(RTLD_NEXT, "readv");
  real.writev = dlsym(RTLD_NEXT, "writev");
  real.send = dlsym(RTLD_NEXT, "send");
  real.recv = dlsym(RTLD_NEXT, "recv");
  real.sendto = dlsym(RTLD_NEXT, "sendto");
  real.recvfrom = dlsym(RTLD_NEXT, "recvfrom");
  real.sendmsg = dlsym(RTLD_NEXT, "sendmsg");
  real.recvmsg = dlsym(RTLD_NEXT, "recvmsg");
  real.connect = dlsym(RTLD_NEXT, "connect");
  real.epoll_wait = dlsym(RTLD_NEXT, "epoll_wait");
  real.epoll_pwait = dlsym(RTLD_NEXT, "epoll_pwait");
  real.epoll_pwait2 = dlsym(RTLD_NEXT, "epoll_pwait2");
  real.poll = dlsym(RTLD_NEXT, "poll");
  real.ppoll = dlsym(RTLD_NEXT, "ppoll");
  real.select = dlsym(RTLD_NEXT, "select");
  real.pselect = dlsym(RTLD_NEXT, "pselect");
  real.getaddrinfo = dlsym(RTLD_NEXT, "getaddrinfo");
  real.gethostbyname = dlsym(RTLD_NEXT, "gethostbyname");
  real.gethostbyname2 = dlsym(RTLD_NEXT, "gethostbyname2");
  real.gethostbyname_r = dlsym(RTLD_NEXT, "gethostbyname_r");
  real.gethostbyname2_r = dlsym(RTLD_NEXT, "gethostbyname2_r");
  __atomic_store_n(&real.read, dlsym(RTLD_NEXT, "read"), __ATOMIC_RELEASE);
}

/* --- settings ------------------------------------------------------------------------------ */

static void bad_setting(const char *name, const char *value) {
  char line[640];
  snprintf(line, sizeof line, "tlslab-io-shim: bad %s=%.500s (see shims/README.md)", name, value);
  shim_emit("", line);
  _exit(2);
}

static uint64_t env_u64(const char *name, uint64_t fallback) {
  const char *v = getenv(name);
  if (!v || !*v) return fallback;
  char *end;
  errno = 0;
  unsigned long long n = strtoull(v, &end, 10);
  if (errno || *end || v[0] == '-') bad_setting(name, v);
  return n;
}

static int env_choice(const char *name, const char *const *names, int n, int fallback) {
  const char *v = getenv(name);
  if (!v || !*v) return fallback;
  for (int i = 0; i < n; i++)
    if (strcmp(v, names[i]) == 0) return i;
  bad_setting(name, v);
  return fallback;
}

static void read_settings(void) {
  static const char *const dirs[] = {"send", "recv"};
  cfg.mode = (enum mode)env_choice("TLSLAB_IO_MODE", MODE_NAMES, 3, MODE_FIXED);
  uint64_t cap_default = cfg.mode == MODE_RANDOM ? 4096 : 0;
  cfg.max[DIR_SEND] = env_u64("TLSLAB_IO_MAX_SEND", cap_default);
  cfg.max[DIR_RECV] = env_u64("TLSLAB_IO_MAX_RECV", cap_default);
  if (cfg.mode == MODE_RANDOM && (!cfg.max[DIR_SEND] || !cfg.max[DIR_RECV]))
    bad_setting("TLSLAB_IO_MAX_SEND/RECV", "0 (random mode draws from 1..max)");
  cfg.eagain_every = (unsigned)env_u64("TLSLAB_IO_EAGAIN_EVERY", 0);
  cfg.seed_given = getenv("TLSLAB_IO_SEED") && *getenv("TLSLAB_IO_SEED");
  cfg.seed = env_u64("TLSLAB_IO_SEED", 1); /* a fixed stream unless given: one tree, one verdict */
  cfg.fault = (enum fault)env_choice("TLSLAB_IO_FAULT", FAULT_NAMES, 4, FAULT_NONE);
  cfg.fault_conn = (long)env_u64("TLSLAB_IO_FAULT_CONN", 0);
  cfg.fault_byte = env_u64("TLSLAB_IO_FAULT_BYTE", 0);
  cfg.fault_dir = (enum dir)env_choice("TLSLAB_IO_FAULT_DIR", dirs, 2, cfg.fault == FAULT_EPIPE || cfg.fault == FAULT_STALL ? DIR_SEND : DIR_RECV);
  if (cfg.fault == FAULT_EPIPE && cfg.fault_dir != DIR_SEND)
    bad_setting("TLSLAB_IO_FAULT_DIR", "recv (EPIPE is a send error)");
  shim_env_copy("TLSLAB_IO_REPORT", cfg.report, sizeof cfg.report);
}

/* --- per-socket state ---------------------------------------------------------------------- */

static uint64_t splitmix(uint64_t *x) {
  uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* Each connection and direction draws from its own stream: a run reproduces per connection
 * whatever order the event loop happens to serve connections in. */
static void start_connection(struct sock *s) {
  s->conn = (long)count.connects++;
  for (int d = 0; d < 2; d++) {
    uint64_t x = cfg.seed ^ ((uint64_t)s->conn << 1 | (uint64_t)d) * 0xD1B54A32D192ED03ull;
    s->rng[d] = splitmix(&x);
  }
}

static enum kind classify(int fd) {
  int type = 0;
  socklen_t tlen = sizeof type;
  struct sockaddr_storage addr;
  socklen_t alen = sizeof addr;
  if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tlen) != 0) return KIND_OTHER;
  if (getsockname(fd, (struct sockaddr *)&addr, &alen) != 0) return KIND_OTHER;
  if (addr.ss_family != AF_INET && addr.ss_family != AF_INET6) return KIND_OTHER;
  return type == SOCK_STREAM ? KIND_TCP : type == SOCK_DGRAM ? KIND_UDP : KIND_OTHER;
}

/* The state of fd's socket, whatever its kind, or NULL when fd is none. Caller holds the lock. */
static struct sock *entry(int fd) {
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode)) return NULL;
  if (fd >= SHIM_FDS) {
    count.untracked++;
    return NULL;
  }
  struct sock *s = &table[fd];
  if (s->kind == KIND_UNKNOWN || s->dev != st.st_dev || s->ino != st.st_ino) {
    memset(s, 0, sizeof *s);
    s->dev = st.st_dev;
    s->ino = st.st_ino;
    s->conn = -1;
    s->kind = classify(fd);
    if (s->kind == KIND_TCP) count.sockets++;
  }
  return s;
}


/* --- the decision for one call ------------------------------------------------------------- */

/* What to do with one call: pass it through, cap it, or answer it without the kernel. */
struct plan {
  struct sock *s;
  enum dir dir;
  size_t cap;      /* bytes the call may move */
  int inject;      /* 1: return `ret` with errno `err` without calling the kernel */
  ssize_t ret;
  int err;
  int sigpipe;     /* raise SIGPIPE with the EPIPE, as the kernel does without MSG_NOSIGNAL */
};

static int nonblocking(int fd, int flags) {
  if (flags & MSG_DONTWAIT) return 1;
  int fl = fcntl(fd, F_GETFL);
  return fl >= 0 && (fl & O_NONBLOCK);
}

/* --- the loop, counted ---------------------------------------------------------------------- */

static void add(uint64_t *counter, uint64_t n) { __atomic_fetch_add(counter, n, __ATOMIC_RELAXED); }

/* A blocking call on an Internet socket (no O_NONBLOCK, no MSG_DONTWAIT): counted against the loop
 * when this thread waits in epoll/poll/select, at once or once it first does. Caller holds the lock. */
static void check_blocking(int fd, const struct sock *e, int flags) {
  if (!e || (e->kind != KIND_TCP && e->kind != KIND_UDP) || nonblocking(fd, flags)) return;
  if (loop_thread) count.blocking_calls++;
  else blocking_before_loop++;
}

/* A call that moved bytes (or read the end of a stream) is progress: the wake-up before it was not idle. */
static ssize_t moved(ssize_t r, size_t len, enum dir dir) {
  if (!dormant && (r > 0 || (r == 0 && dir == DIR_RECV && len > 0))) {
    add(&count.progress, 1);
    woke_idle = 0;
  }
  return r;
}

/* Before a wait: this thread is a loop; the wake-up before it made no progress if nothing moved since. */
static void wait_begins(void) {
  if (dormant) return;
  if (!loop_thread) {
    loop_thread = 1;
    add(&count.loop_threads, 1);
    add(&count.blocking_calls, blocking_before_loop);
    add(&count.resolver_calls, resolving_before_loop);
  }
  if (woke_idle) add(&count.idle_waits, 1);
  woke_idle = 0;
}

static int wait_ends(int r) {
  if (dormant) return r;
  add(&count.waits, 1);
  woke_idle = 1;
  return r;
}

static void inject_error(struct plan *p, int err, int may_sigpipe) {
  p->inject = 1;
  p->ret = -1;
  p->err = err;
  p->sigpipe = err == EPIPE && may_sigpipe;
}

/* The stall fault's answer to every call of its direction once it fired: the window never opens again. */
static int stall(struct plan *p) {
  inject_error(p, EAGAIN, 0);
  count.eagain++;
  return 1;
}

/* The connection's fault: cap the call to end at byte K, or fire when it is reached. */
static int apply_fault(struct plan *p, int may_sigpipe) {
  struct sock *s = p->s;
  if (s->broken && cfg.fault == FAULT_STALL) return p->dir == cfg.fault_dir ? stall(p) : 0;
  if (s->broken) {
    if (p->dir == DIR_RECV) {
      p->inject = 1; /* end of file: the peer is gone */
      p->ret = 0;
      p->err = 0;
    } else {
      inject_error(p, EPIPE, may_sigpipe);
    }
    return 1;
  }
  if (cfg.fault == FAULT_NONE || s->conn != cfg.fault_conn || p->dir != cfg.fault_dir) return 0;
  uint64_t left = cfg.fault_byte - s->bytes[p->dir];
  if (s->bytes[p->dir] < cfg.fault_byte) {
    if (p->cap == 0 || p->cap > left) p->cap = (size_t)left;
    return 0;
  }
  s->broken = 1;
  count.faults++;
  if (cfg.fault == FAULT_STALL) return stall(p);
  inject_error(p, cfg.fault == FAULT_RESET ? ECONNRESET : EPIPE, may_sigpipe);
  return 1;
}

static int refuse_now(const struct plan *p, uint64_t n) {
  switch (cfg.mode) {
    case MODE_FIXED: return cfg.eagain_every && n % cfg.eagain_every == 0;
    case MODE_RANDOM: return cfg.eagain_every && splitmix(&p->s->rng[p->dir]) % cfg.eagain_every == 0;
    case MODE_ONEBYTE: return n % 2 == 1; /* zero quota first, then one byte: BoringSSL's async BIO */
  }
  return 0;
}

static size_t cap_now(struct plan *p) {
  switch (cfg.mode) {
    case MODE_FIXED: return cfg.max[p->dir];
    case MODE_RANDOM: return 1 + (size_t)(splitmix(&p->s->rng[p->dir]) % cfg.max[p->dir]);
    case MODE_ONEBYTE: return 1;
  }
  return 0;
}

/* Decide for one call of LEN bytes; 0 means "not ours, pass it through". */
static int plan_call(struct plan *p, int fd, enum dir dir, size_t len, int flags, int may_sigpipe) {
  resolve_real();
  if (dormant) return 0;
  memset(p, 0, sizeof *p);
  pthread_mutex_lock(&lock);
  struct sock *e = entry(fd);
  check_blocking(fd, e, flags);
  p->s = e && e->kind == KIND_TCP && len > 0 && !(flags & MSG_PEEK) ? e : NULL;
  if (!p->s) {
    pthread_mutex_unlock(&lock);
    return 0;
  }
  p->dir = dir;
  if (p->s->conn < 0) start_connection(p->s);
  uint64_t n = ++p->s->calls[dir];
  count.calls++;
  if (dir == DIR_SEND) count.send_calls++; else count.recv_calls++;
  p->cap = cap_now(p);
  if (!apply_fault(p, may_sigpipe) && refuse_now(p, n)) {
    if (nonblocking(fd, flags)) {
      inject_error(p, EAGAIN, 0);
      count.eagain++;
    } else {
      count.eagain_skipped_blocking++; /* a blocking caller never expects EAGAIN */
    }
  }
  if (p->inject) {
    pthread_mutex_unlock(&lock);
    return 1;
  }
  if (p->cap == 0 || p->cap > len) p->cap = len;
  count.bytes_cut += len - p->cap;
  pthread_mutex_unlock(&lock);
  return 1;
}

static ssize_t injected(const struct plan *p) {
  if (p->err == EAGAIN) woke_idle = 0; /* the loop served its wake-up: the refusal is the shim's, not a spurious wake */
  if (p->sigpipe) raise(SIGPIPE);
  errno = p->err;
  return p->ret;
}

static ssize_t account(const struct plan *p, ssize_t r) {
  if (r <= 0) return r;  /* an end of file is progress too: the callers pass every result through moved() */
  int saved = errno;
  pthread_mutex_lock(&lock);
  p->s->bytes[p->dir] += (uint64_t)r;
  if (p->dir == DIR_SEND) count.bytes_sent += (uint64_t)r; else count.bytes_received += (uint64_t)r;
  pthread_mutex_unlock(&lock);
  errno = saved;
  return r;
}

/* Copy IOV into OUT, cut to CAP bytes in total; returns the count of entries used. */
static int cut_iov(const struct iovec *iov, int n, size_t cap, struct iovec *out) {
  int used = 0;
  for (int i = 0; i < n && cap > 0; i++) {
    out[used] = iov[i];
    if (out[used].iov_len > cap) out[used].iov_len = cap;
    cap -= out[used].iov_len;
    used++;
  }
  return used;
}

static size_t iov_total(const struct iovec *iov, int n) {
  size_t total = 0;
  for (int i = 0; i < n; i++) total += iov[i].iov_len;
  return total;
}

/* --- the wrapped calls --------------------------------------------------------------------- */

EXPORT ssize_t read(int fd, void *buf, size_t len) {
  struct plan p;
  if (!plan_call(&p, fd, DIR_RECV, len, 0, 0)) return moved(real.read(fd, buf, len), len, DIR_RECV);
  if (p.inject) return moved(injected(&p), len, DIR_RECV);
  return moved(account(&p, real.read(fd, buf, p.cap)), len, DIR_RECV);
}

EXPORT ssize_t __read_chk(int fd, void *buf, size_t len, size_t buflen) {
  if (len > buflen) abort(); /* what glibc's check does */
  return read(fd, buf, len);
}

EXPORT ssize_t write(int fd, const void *buf, size_t len) {
  struct plan p;
  if (!plan_call(&p, fd, DIR_SEND, len, 0, 1)) return moved(real.write(fd, buf, len), len, DIR_SEND);
  if (p.inject) return moved(injected(&p), len, DIR_SEND);
  return moved(account(&p, real.write(fd, buf, p.cap)), len, DIR_SEND);
}

EXPORT ssize_t recv(int fd, void *buf, size_t len, int flags) {
  struct plan p;
  if (!plan_call(&p, fd, DIR_RECV, len, flags, 0)) return moved(real.recv(fd, buf, len, flags), len, DIR_RECV);
  if (p.inject) return moved(injected(&p), len, DIR_RECV);
  return moved(account(&p, real.recv(fd, buf, p.cap, flags)), len, DIR_RECV);
}

EXPORT ssize_t __recv_chk(int fd, void *buf, size_t len, size_t buflen, int flags) {
  if (len > buflen) abort();
  return recv(fd, buf, len, flags);
}

EXPORT ssize_t send(int fd, const void *buf, size_t len, int flags) {
  struct plan p;
  if (!plan_call(&p, fd, DIR_SEND, len, flags, !(flags & MSG_NOSIGNAL))) return moved(real.send(fd, buf, len, flags), len, DIR_SEND);
  if (p.inject) return moved(injected(&p), len, DIR_SEND);
  return moved(account(&p, real.send(fd, buf, p.cap, flags)), len, DIR_SEND);
}

EXPORT ssize_t recvfrom(int fd, void *buf, size_t len, int flags, struct sockaddr *from, socklen_t *fromlen) {
  struct plan p;
  if (!plan_call(&p, fd, DIR_RECV, len, flags, 0)) return moved(real.recvfrom(fd, buf, len, flags, from, fromlen), len, DIR_RECV);
  if (p.inject) return moved(injected(&p), len, DIR_RECV);
  return moved(account(&p, real.recvfrom(fd, buf, p.cap, flags, from, fromlen)), len, DIR_RECV);
}

EXPORT ssize_t __recvfrom_chk(int fd, void *buf, size_t len, size_t buflen, int flags, struct sockaddr *from,
                              socklen_t *fromlen) {
  if (len > buflen) abort();
  return recvfrom(fd, buf, len, flags, from, fromlen);
}

EXPORT ssize_t sendto(int fd, const void *buf, size_t len, int flags, const struct sockaddr *to, socklen_t tolen) {
  struct plan p;
  if (!plan_call(&p, fd, DIR_SEND, len, flags, !(flags & MSG_NOSIGNAL)))
    return moved(real.sendto(fd, buf, len, flags, to, tolen), len, DIR_SEND);
  if (p.inject) return moved(injected(&p), len, DIR_SEND);
  return moved(account(&p, real.sendto(fd, buf, p.cap, flags, to, tolen)), len, DIR_SEND);
}

/* readv and writev: one plan over the vector's total, then the vector cut to the plan's cap. */
static ssize_t vectored(int fd, const struct iovec *iov, int n, enum dir dir) {
  struct plan p;
  int planned = n >= 0 && n <= IOV_MAX && plan_call(&p, fd, dir, iov_total(iov, n), 0, dir == DIR_SEND);
  /* chosen after plan_call, which resolves the real calls */
  ssize_t (*pass)(int, const struct iovec *, int) = dir == DIR_SEND ? real.writev : real.readv;
  if (!planned) return pass(fd, iov, n);
  if (p.inject) return injected(&p);
  struct iovec cut[IOV_MAX];
  return account(&p, pass(fd, cut, cut_iov(iov, n, p.cap, cut)));
}

static size_t vector_len(const struct iovec *iov, int n) { return n >= 0 && n <= IOV_MAX ? iov_total(iov, n) : 0; }

EXPORT ssize_t readv(int fd, const struct iovec *iov, int n) {
  return moved(vectored(fd, iov, n, DIR_RECV), vector_len(iov, n), DIR_RECV);
}

EXPORT ssize_t writev(int fd, const struct iovec *iov, int n) {
  return moved(vectored(fd, iov, n, DIR_SEND), vector_len(iov, n), DIR_SEND);
}

static ssize_t recvmsg_planned(int fd, struct msghdr *msg, int flags) {
  struct plan p;
  int n = (int)msg->msg_iovlen;
  if (n < 0 || n > IOV_MAX || !plan_call(&p, fd, DIR_RECV, iov_total(msg->msg_iov, n), flags, 0))
    return real.recvmsg(fd, msg, flags);
  if (p.inject) return injected(&p);
  struct iovec cut[IOV_MAX], *orig = msg->msg_iov;
  msg->msg_iov = cut;
  msg->msg_iovlen = (size_t)cut_iov(orig, n, p.cap, cut);
  ssize_t r = real.recvmsg(fd, msg, flags);
  msg->msg_iov = orig;
  msg->msg_iovlen = (size_t)n;
  return account(&p, r);
}

EXPORT ssize_t recvmsg(int fd, struct msghdr *msg, int flags) {
  return moved(recvmsg_planned(fd, msg, flags), vector_len(msg->msg_iov, (int)msg->msg_iovlen), DIR_RECV);
}

static ssize_t sendmsg_planned(int fd, const struct msghdr *msg, int flags) {
  struct plan p;
  int n = (int)msg->msg_iovlen;
  if (n < 0 || n > IOV_MAX || !plan_call(&p, fd, DIR_SEND, iov_total(msg->msg_iov, n), flags, !(flags & MSG_NOSIGNAL)))
    return real.sendmsg(fd, msg, flags);
  if (p.inject) return injected(&p);
  struct iovec cut[IOV_MAX];
  struct msghdr m = *msg;
  m.msg_iov = cut;
  m.msg_iovlen = (size_t)cut_iov(msg->msg_iov, n, p.cap, cut);
  return account(&p, real.sendmsg(fd, &m, flags));
}

EXPORT ssize_t sendmsg(int fd, const struct msghdr *msg, int flags) {
  return moved(sendmsg_planned(fd, msg, flags), vector_len(msg->msg_iov, (int)msg->msg_iovlen), DIR_SEND);
}

/* connect() numbers the connections (TLSLAB_IO_FAULT_CONN counts in this order). */
EXPORT int connect(int fd, const struct sockaddr *addr, socklen_t len) {
  resolve_real();
  if (dormant) return real.connect(fd, addr, len);
  pthread_mutex_lock(&lock);
  struct sock *e = entry(fd);
  check_blocking(fd, e, 0);
  if (e && e->kind == KIND_TCP && e->conn < 0) start_connection(e);
  pthread_mutex_unlock(&lock);
  return real.connect(fd, addr, len);
}

/* The waits of an event loop: each return is a wake-up, idle unless the thread moves bytes before its next wait. */
EXPORT int epoll_wait(int epfd, struct epoll_event *events, int max, int timeout) {
  resolve_real();
  wait_begins();
  return wait_ends(real.epoll_wait(epfd, events, max, timeout));
}

EXPORT int epoll_pwait(int epfd, struct epoll_event *events, int max, int timeout, const sigset_t *mask) {
  resolve_real();
  wait_begins();
  return wait_ends(real.epoll_pwait(epfd, events, max, timeout, mask));
}

EXPORT int epoll_pwait2(int epfd, struct epoll_event *events, int max, const struct timespec *timeout,
                        const sigset_t *mask) {
  resolve_real();
  if (!real.epoll_pwait2) {
    errno = ENOSYS;
    return -1;
  }
  wait_begins();
  return wait_ends(real.epoll_pwait2(epfd, events, max, timeout, mask));
}

EXPORT int poll(struct pollfd *fds, nfds_t n, int timeout) {
  resolve_real();
  wait_begins();
  return wait_ends(real.poll(fds, n, timeout));
}

EXPORT int __poll_chk(struct pollfd *fds, nfds_t n, int timeout, size_t fdslen) {
  if (fdslen / sizeof *fds < n) abort();
  return poll(fds, n, timeout);
}

EXPORT int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *timeout, const sigset_t *mask) {
  resolve_real();
  wait_begins();
  return wait_ends(real.ppoll(fds, n, timeout, mask));
}

EXPORT int select(int n, fd_set *r, fd_set *w, fd_set *x, struct timeval *timeout) {
  resolve_real();
  wait_begins();
  return wait_ends(real.select(n, r, w, x, timeout));
}

EXPORT int pselect(int n, fd_set *r, fd_set *w, fd_set *x, const struct timespec *timeout, const sigset_t *mask) {
  resolve_real();
  wait_begins();
  return wait_ends(real.pselect(n, r, w, x, timeout, mask));
}

/* The blocking resolver: a name (not an address literal) looked up on a loop's thread stops the loop. */
static void resolving(const char *name) {
  unsigned char addr[sizeof(struct in6_addr)];
  if (dormant || !name || inet_pton(AF_INET, name, addr) == 1 || inet_pton(AF_INET6, name, addr) == 1) return;
  if (loop_thread) add(&count.resolver_calls, 1);
  else resolving_before_loop++;
}

EXPORT int getaddrinfo(const char *node, const char *service, const struct addrinfo *hints, struct addrinfo **res) {
  resolve_real();
  if (!(hints && (hints->ai_flags & AI_NUMERICHOST))) resolving(node);
  return real.getaddrinfo(node, service, hints, res);
}

EXPORT struct hostent *gethostbyname(const char *name) {
  resolve_real();
  resolving(name);
  return real.gethostbyname(name);
}

EXPORT struct hostent *gethostbyname2(const char *name, int af) {
  resolve_real();
  resolving(name);
  return real.gethostbyname2(name, af);
}

EXPORT int gethostbyname_r(const char *name, struct hostent *ret, char *buf, size_t len, struct hostent **result,
                           int *err) {
  resolve_real();
  resolving(name);
  return real.gethostbyname_r(name, ret, buf, len, result, err);
}

EXPORT int gethostbyname2_r(const char *name, int af, struct hostent *ret, char *buf, size_t len,
                            struct hostent **result, int *err) {
  resolve_real();
  resolving(name);
  return real.gethostbyname2_r(name, af, ret, buf, len, result, err);
}

/* --- start and exit ------------------------------------------------------------------------ */

__attribute__((constructor)) static void io_shim_start(void) {
  resolve_real();
  if (!shim_in_scope()) { /* a wrapper that starts the client passes LD_PRELOAD on */
    dormant = 1;
    return;
  }
  read_settings();
  shim_unset_preload(); /* the client's children (servers, helpers it runs) are not shimmed */
}

__attribute__((destructor(101))) static void io_shim_report(void) {
  if (dormant) return;
  char line[1536];
  snprintf(line, sizeof line,
           "tlslab-io-shim {\"active\":%s,\"mode\":\"%s\",\"seed\":%" PRIu64 ",\"seed_given\":%s,"
           "\"max_send\":%zu,\"max_recv\":%zu,\"eagain_every\":%u,\"fault\":\"%s\",\"fault_conn\":%ld,"
           "\"fault_byte\":%" PRIu64 ",\"fault_dir\":\"%s\",\"sockets\":%" PRIu64 ",\"connections\":%" PRIu64
           ",\"calls\":%" PRIu64 ",\"send_calls\":%" PRIu64 ",\"recv_calls\":%" PRIu64 ",\"bytes_sent\":%" PRIu64
           ",\"bytes_received\":%" PRIu64 ",\"bytes_cut\":%" PRIu64 ",\"eagain\":%" PRIu64
           ",\"eagain_skipped_blocking\":%" PRIu64 ",\"faults\":%" PRIu64 ",\"untracked\":%" PRIu64
           ",\"waits\":%" PRIu64 ",\"idle_waits\":%" PRIu64 ",\"progress\":%" PRIu64 ",\"blocking_calls\":%" PRIu64
           ",\"resolver_calls\":%" PRIu64 ",\"loop_threads\":%" PRIu64 ",\"fds_open\":%d}",
           count.calls ? "true" : "false", MODE_NAMES[cfg.mode], cfg.seed, cfg.seed_given ? "true" : "false",
           cfg.max[DIR_SEND], cfg.max[DIR_RECV], cfg.eagain_every, FAULT_NAMES[cfg.fault], cfg.fault_conn,
           cfg.fault_byte, cfg.fault_dir == DIR_SEND ? "send" : "recv", count.sockets, count.connects, count.calls,
           count.send_calls, count.recv_calls, count.bytes_sent, count.bytes_received, count.bytes_cut, count.eagain,
           count.eagain_skipped_blocking, count.faults, count.untracked, count.waits, count.idle_waits, count.progress,
           count.blocking_calls, count.resolver_calls, count.loop_threads, shim_open_fds());
  shim_emit(cfg.report, line);
  if (!count.calls) shim_emit("", "tlslab-io-shim: shim inactive: no socket call was seen");
}
