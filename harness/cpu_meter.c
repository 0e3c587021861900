/* cpu_meter: the interpreter a CTest gate runs, with its CPU counted (harness/CMakeLists.txt builds it as
 * BUILD/harness/cpu_meter/python3; cmake/tlslab.cmake's tlslab_gate puts it where a gate's command
 * names ${Python3_EXECUTABLE}).
 *
 *   cpu_meter ARGS...      runs METERED_PROGRAM (Debian's /usr/bin/python3) with ARGS, as its argv[0]
 *
 * Without TLSLAB_CPU_DIR in its environment it is that program: it execs it, nothing else (a gate run
 * by hand, by plain ctest, or by mutants/ from CTest's command). With it (harness/lab_gate.py sets it
 * for its CTest run) it forks, runs the program, waits, and writes the CPU-seconds (user + system) of
 * the whole tree it waited for (getrusage RUSAGE_CHILDREN: the program and every descendant reaped
 * below it) to TLSLAB_CPU_DIR/<TLSLAB_GATE_TEST>.json. It is the descendants' subreaper, so a
 * grandchild orphaned by its parent's death is reaped, and counted, here rather than by init. A
 * descendant still running when the program exits (its peers, dying by their death signal) is waited
 * for 2 s at most; one still running then is left, as CTest would have left it, and counted in
 * `left_running` (its CPU is not in the figure). TLSLAB_CPU_DIR is taken
 * out of the program's environment: a gate that runs other gates (mutants/) does not meter them over
 * this test's file.
 *
 * Transparent otherwise: the program's exit status is this one's (a death by a signal raised again
 * here); SIGTERM and SIGHUP are passed on; SIGINT and SIGQUIT are ignored while it waits, as system()
 * does (a terminal sends them to the whole group, the program included); the program dies with this
 * process (PR_SET_PDEATHSIG SIGKILL), so CTest's kill of a test past its TIMEOUT reaches it as before.
 * A C program, not Python: it costs one fork and one exec a test, no interpreter start (20 ms of CPU and
 * 10 MB a test), and it keeps the command's shape (`python3 -m MODULE`) that mutants/gate_rows.py and
 * unit harness_gate_lists read from CTest. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef METERED_PROGRAM
#error "METERED_PROGRAM: the program this runs (harness/CMakeLists.txt defines it)"
#endif

#define GRACE_MS 2000   /* how long the descendants that outlive the program are waited for */

static volatile sig_atomic_t child = 0;

/* The processes whose parent is PID (/proc/N/stat's fourth field). */
static int still_running(pid_t pid) {
  int n = 0;
  DIR* d = opendir("/proc");
  if (!d) return -1;
  for (struct dirent* e; (e = readdir(d));) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    char path[300], text[1024];
    snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
    FILE* f = fopen(path, "r");
    if (!f) continue;
    size_t got = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[got] = 0;
    char* close = strrchr(text, ')');
    int ppid = 0;
    if (close && sscanf(close + 1, " %*c %d", &ppid) == 1 && ppid == pid) ++n;
  }
  closedir(d);
  return n;
}

static void pass_on(int sig) {
  if (child > 0) kill(child, sig);
}

static double seconds(struct timeval tv) { return (double)tv.tv_sec + (double)tv.tv_usec / 1e6; }

/* DIR/NAME.json, NAME with '/' as '_', written whole (a temp file renamed) or not at all. */
static void write_figures(const char* dir, const char* test, double wall, int status, int orphans, int left) {
  struct rusage ru;
  if (getrusage(RUSAGE_CHILDREN, &ru) != 0) return;
  char name[512];
  snprintf(name, sizeof name, "%s", test);
  for (char* p = name; *p; ++p)
    if (*p == '/' || *p == '"' || *p == '\\' || (unsigned char)*p < 0x20) *p = '_';
  char path[4096], tmp[4200];
  snprintf(path, sizeof path, "%s/%s.json", dir, name);
  snprintf(tmp, sizeof tmp, "%s.%d.tmp", path, (int)getpid());
  mkdir(dir, 0755);   /* lab_gate.py makes it; a second mkdir is harmless */
  FILE* f = fopen(tmp, "w");
  if (!f) {
    fprintf(stderr, "cpu_meter: %s: %s (no CPU figure for %s)\n", tmp, strerror(errno), test);
    return;
  }
  double user = seconds(ru.ru_utime), sys = seconds(ru.ru_stime);
  fprintf(f, "{\"test\": \"%s\", \"cpu_s\": %.6f, \"user_s\": %.6f, \"system_s\": %.6f, \"wall_s\": %.6f, "
             "\"maxrss_kib\": %ld, \"exit\": %d, \"signal\": %d, \"orphans_reaped\": %d, \"left_running\": %d}\n",
          name, user + sys, user, sys, wall, ru.ru_maxrss, WIFEXITED(status) ? WEXITSTATUS(status) : -1,
          WIFSIGNALED(status) ? WTERMSIG(status) : 0, orphans, left);
  if (fclose(f) != 0 || rename(tmp, path) != 0) unlink(tmp);
}

int main(int argc, char** argv) {
  (void)argc;
  argv[0] = (char*)METERED_PROGRAM;
  const char* dir_env = getenv("TLSLAB_CPU_DIR");
  if (!dir_env || !*dir_env) {
    execv(METERED_PROGRAM, argv);
    fprintf(stderr, "cpu_meter: %s: %s\n", METERED_PROGRAM, strerror(errno));
    return 127;
  }
  char* dir = strdup(dir_env);
  const char* test_env = getenv("TLSLAB_GATE_TEST");
  char* test = strdup(test_env && *test_env ? test_env : "unnamed");
  unsetenv("TLSLAB_CPU_DIR");

  prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  struct sigaction on = {0}, off = {0};
  on.sa_handler = pass_on;
  sigemptyset(&on.sa_mask);
  off.sa_handler = SIG_IGN;
  sigemptyset(&off.sa_mask);
  struct timespec began, ended;
  clock_gettime(CLOCK_MONOTONIC, &began);
  sigset_t passed, before;   /* held from before the fork until the handlers know the child */
  sigemptyset(&passed);
  sigaddset(&passed, SIGTERM);
  sigaddset(&passed, SIGHUP);
  sigaddset(&passed, SIGINT);
  sigaddset(&passed, SIGQUIT);
  sigprocmask(SIG_BLOCK, &passed, &before);
  pid_t me = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    fprintf(stderr, "cpu_meter: fork: %s\n", strerror(errno));
    return 127;
  }
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (getppid() != me) _exit(127);   /* the meter died before the prctl took */
    sigprocmask(SIG_SETMASK, &before, NULL);
    execv(METERED_PROGRAM, argv);
    fprintf(stderr, "cpu_meter: %s: %s\n", METERED_PROGRAM, strerror(errno));
    _exit(127);
  }
  child = pid;
  sigaction(SIGTERM, &on, NULL);
  sigaction(SIGHUP, &on, NULL);
  sigaction(SIGINT, &off, NULL);
  sigaction(SIGQUIT, &off, NULL);
  sigprocmask(SIG_SETMASK, &before, NULL);

  int status = 0, st, orphans = 0;
  long end_ms = 0;   /* when the program ended, from the start */
  for (;;) {   /* every child reaped as it ends (orphans handed to us too), until the program's end */
    pid_t got = waitpid(-1, &st, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      break;   /* ECHILD: cannot be before the program's end, but never spin */
    }
    if (got == pid) {
      status = st;
      clock_gettime(CLOCK_MONOTONIC, &ended);
      end_ms = (ended.tv_sec - began.tv_sec) * 1000 + (ended.tv_nsec - began.tv_nsec) / 1000000;
      break;
    }
    ++orphans;
  }
  child = 0;
  /* What outlives the program is mostly dying of it (its peers and zygote, killed by their death
     signal): waited for GRACE_MS at most, so their CPU is counted; what is still running then is
     left (counted in left_running, its CPU not), as CTest would have left it. */
  struct timespec tick = {0, 2 * 1000 * 1000}, now;
  int left = 0;
  for (;;) {
    pid_t got = waitpid(-1, &st, WNOHANG);
    if (got > 0) {
      ++orphans;
      continue;
    }
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) break;   /* ECHILD: nothing left */
    clock_gettime(CLOCK_MONOTONIC, &now);
    if ((now.tv_sec - began.tv_sec) * 1000 + (now.tv_nsec - began.tv_nsec) / 1000000 > end_ms + GRACE_MS) {
      left = still_running(me);
      break;
    }
    nanosleep(&tick, NULL);
  }
  double wall = (double)(ended.tv_sec - began.tv_sec) + (double)(ended.tv_nsec - began.tv_nsec) / 1e9;
  write_figures(dir, test, wall, status, orphans, left);

  if (WIFSIGNALED(status)) {   /* die as the program died, without a core of our own */
    struct rlimit none = {0, 0};
    setrlimit(RLIMIT_CORE, &none);
    signal(WTERMSIG(status), SIG_DFL);
    sigset_t all;
    sigfillset(&all);
    sigprocmask(SIG_UNBLOCK, &all, NULL);
    raise(WTERMSIG(status));
    return 128 + WTERMSIG(status);
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
