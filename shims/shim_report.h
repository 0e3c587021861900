/* What both shims do at exit: count open descriptors and write one report line.
 * Raw system calls only: this runs inside a malloc or a write() wrapper, late in exit(). */
#pragma once

#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Descriptors open in this process, not counting the one used to list them (-1 if /proc is missing). */
static int shim_open_fds(void) {
  int dir = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return -1;
  char buf[4096];
  int count = 0;
  for (;;) {
    long n = syscall(SYS_getdents64, dir, buf, sizeof buf);
    if (n <= 0) break;
    for (long off = 0; off < n;) {
      /* struct linux_dirent64: ino (8), off (8), reclen (2), type (1), name */
      unsigned short reclen;
      memcpy(&reclen, buf + off + 16, sizeof reclen);
      const char *name = buf + off + 19;
      if (name[0] != '.') count++;
      off += reclen;
    }
  }
  syscall(SYS_close, dir);
  return count - 1; /* the listing's own descriptor */
}

/* Copy an environment value into BUF at start-up (environ may change before exit). */
static void shim_env_copy(const char *name, char *buf, size_t size) {
  const char *v = getenv(name);
  buf[0] = '\0';
  if (v && strlen(v) < size) strcpy(buf, v);
}

/* Write LINE (no newline) to PATH, or to stderr when PATH is empty. */
static void shim_emit(const char *path, const char *line) {
  int fd = 2, own = 0;
  if (path[0]) {
    fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    own = fd >= 0;
    if (!own) fd = 2;
  }
  size_t len = strlen(line);
  syscall(SYS_write, fd, line, len);
  syscall(SYS_write, fd, "\n", 1);
  if (own) syscall(SYS_close, fd);
}

/* Whether the shim acts in this process. TLSLAB_SHIM_PROGRAM names the program it acts in (the
 * basename of /proc/self/exe, e.g. tlsnb): a wrapper that starts it (valgrind, gdb's shell, timeout)
 * loads the shim too and must pass it on untouched. Unset: the first process that loads it. */
static int shim_in_scope(void) {
  const char *want = getenv("TLSLAB_SHIM_PROGRAM");
  if (!want || !*want) return 1;
  char exe[4096];
  long n = syscall(SYS_readlinkat, AT_FDCWD, "/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return 0;
  exe[n] = '\0';
  const char *base = strrchr(exe, '/');
  return strcmp(base ? base + 1 : exe, want) == 0;
}

/* Remove LD_PRELOAD from this process's environment: programs it runs start without the shim. */
static void shim_unset_preload(void) { unsetenv("LD_PRELOAD"); }
