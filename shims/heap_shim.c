/* tlslab heap shim (LD_PRELOAD): counts the heap and fails exactly the Nth allocation.
 *
 * malloc, calloc, realloc, reallocarray, free, posix_memalign, aligned_alloc, memalign, valloc
 * and pvalloc forward to glibc's __libc_* entry points (no dlsym, so no recursion). Bytes are
 * counted with malloc_usable_size (what glibc really holds for a block, alignment included).
 * Settings come from TLSLAB_HEAP_* (shims/README.md) and are read at the first allocation, which
 * comes before any constructor: N counts every allocation of the process from its first. The
 * report is written by a destructor of the lowest priority, which runs in _dl_fini after every
 * atexit handler (OpenSSL's OPENSSL_cleanup too).
 */
#define _GNU_SOURCE
#include <link.h>
#include <errno.h>
#include <execinfo.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#else
#define RUNNING_ON_VALGRIND 0
#endif

#include "heap_live.h"
#include "shim_report.h"

#define EXPORT __attribute__((visibility("default")))
#define REFUSED_EXIT 125 /* exit status when the shim refuses to run */

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);
extern void *__libc_valloc(size_t);
extern void *__libc_pvalloc(size_t);

/* Settings, read once, at the first allocation or the constructor, whichever comes first. */
static int configured;
static int dormant;           /* not the program named by TLSLAB_SHIM_PROGRAM: forward, count nothing */
static uint64_t fail_nth;     /* 0: never fail */
static int fail_backtrace;    /* print the stack of the failed allocation to stderr */
static char report_path[512];
static char trace_path[512];  /* TLSLAB_HEAP_TRACE: where every attempt's call site is written at exit */

/* Counters (atomics: any thread may allocate). */
static uint64_t attempts;     /* allocation calls, the failed one included: N counts these */
static uint64_t allocations, frees, failures;
static int64_t outstanding_bytes, outstanding_blocks;
static int64_t peak_bytes;
static uint64_t allocated_bytes; /* every block handed out, its usable size: bytes per request (bench/) */
static uint64_t nth_reached, nth_size;
static const char *nth_call = "";
/* The unwinder's own allocations (stacks, backtraces) are not the client's: not counted. */
static __thread int inside __attribute__((tls_model("initial-exec")));

#define ADD(var, n) __atomic_add_fetch(&(var), (n), __ATOMIC_RELAXED)

/* The trace (TLSLAB_HEAP_TRACE=PATH): the return addresses of every counted attempt, kept in an
 * mmapped table (touched only as far as used) and written at exit as one line an attempt, N in
 * order: its size and a hash of its stack, each frame as (its object's file name, its offset in
 * it), so that two runs of one build, mapped anywhere by ASLR, give the same hash for the same call
 * site. leaks/alloc_sweep.py compares a run with a feature and one without, to sweep the
 * allocations the feature adds. */
#define TRACE_FRAMES 16
#define TRACE_MAX (1u << 20) /* attempts traced; later ones are counted, not traced */
struct trace_slot {
  uint64_t size;
  void *frames[TRACE_FRAMES];
  int count;
};
static struct trace_slot *trace;

static void trace_attempt(uint64_t n, size_t size) {
  if (!trace || n > TRACE_MAX) return;
  struct trace_slot *slot = &trace[n - 1];
  inside = 1;
  slot->count = backtrace(slot->frames, TRACE_FRAMES);
  inside = 0;
  slot->size = size;
}

static void configure(void);

static void note_alloc(void *p) {
  if (inside) return;
  int64_t size = (int64_t)malloc_usable_size(p);
  ADD(allocations, 1);
  ADD(allocated_bytes, (uint64_t)size);
  ADD(outstanding_blocks, 1);
  int64_t now = ADD(outstanding_bytes, size);
  int64_t peak = __atomic_load_n(&peak_bytes, __ATOMIC_RELAXED);
  while (now > peak && !__atomic_compare_exchange_n(&peak_bytes, &peak, now, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
  if (live_mode() == LIVE_OFF) return;
  void *stack[LIVE_FRAMES + 2];
  int frames = 0;
  if (live_mode() == LIVE_STACKS) {
    inside = 1;
    frames = backtrace(stack, LIVE_FRAMES + 2);
    inside = 0;
  }
  /* skip note_alloc and the wrapper itself */
  live_add(p, (size_t)size, frames > 2 ? stack + 2 : stack, frames > 2 ? frames - 2 : 0);
}

static void note_free(void *p) {
  if (inside) return;
  ADD(frees, 1);
  ADD(outstanding_blocks, -1);
  ADD(outstanding_bytes, -(int64_t)malloc_usable_size(p));
  live_remove(p);
}

static void print_backtrace(void) {
  void *frames[64];
  inside = 1;
  int n = backtrace(frames, 64);
  static const char head[] = "tlslab-heap-shim: failed allocation, stack:\n";
  (void)!write(2, head, sizeof head - 1);
  backtrace_symbols_fd(frames, n, 2);
  inside = 0;
}

/* 1 when this allocation call is the one to fail (it is counted either way). */
static int fail_this(const char *call, size_t size) {
  if (!configured) configure();
  if (inside || dormant) return 0;
  uint64_t n = ADD(attempts, 1);
  if (trace) trace_attempt(n, size);
  if (n != fail_nth) return 0;
  nth_reached = 1;
  nth_size = size;
  nth_call = call;
  if (fail_backtrace) print_backtrace();
  return 1;
}

static void *failed(void) {
  ADD(failures, 1);
  errno = ENOMEM;
  return NULL;
}

static void *counted(void *p) {
  if (!p) return failed();
  if (!dormant) note_alloc(p);
  return p;
}

EXPORT void *malloc(size_t size) {
  if (fail_this("malloc", size)) return failed();
  return counted(__libc_malloc(size));
}

EXPORT void *calloc(size_t n, size_t size) {
  if (fail_this("calloc", n * size)) return failed();
  return counted(__libc_calloc(n, size));
}

EXPORT void free(void *p) {
  if (!p) return;
  int saved = errno; /* free must not change errno (POSIX 2024; callers rely on it) */
  if (!dormant) note_free(p);
  __libc_free(p);
  errno = saved;
}

EXPORT void *realloc(void *p, size_t size) {
  if (!p) return malloc(size);
  if (size == 0) { /* glibc: realloc(p, 0) frees p and answers NULL */
    free(p);
    return NULL;
  }
  if (fail_this("realloc", size)) return failed(); /* p stays valid, as in a real failure */
  int64_t old = (int64_t)malloc_usable_size(p);
  void *q = __libc_realloc(p, size);
  if (!q) return failed();
  if (!dormant && !inside) { /* one block resized or moved: a free and an allocation */
    ADD(frees, 1);
    ADD(outstanding_blocks, -1);
    ADD(outstanding_bytes, -old);
    live_remove(p);
    note_alloc(q);
  }
  return q;
}

EXPORT void *reallocarray(void *p, size_t n, size_t size) {
  size_t total;
  if (__builtin_mul_overflow(n, size, &total)) return failed();
  return realloc(p, total);
}

EXPORT void *memalign(size_t align, size_t size) {
  if (fail_this("memalign", size)) return failed();
  return counted(__libc_memalign(align, size));
}

EXPORT void *aligned_alloc(size_t align, size_t size) {
  if (fail_this("aligned_alloc", size)) return failed();
  return counted(__libc_memalign(align, size));
}

EXPORT int posix_memalign(void **out, size_t align, size_t size) {
  if (align % sizeof(void *) != 0 || (align & (align - 1)) != 0) return EINVAL;
  int saved = errno; /* posix_memalign reports through its result, not errno */
  void *p = fail_this("posix_memalign", size) ? failed() : counted(__libc_memalign(align, size));
  errno = saved;
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}

EXPORT void *valloc(size_t size) {
  if (fail_this("valloc", size)) return failed();
  return counted(__libc_valloc(size));
}

EXPORT void *pvalloc(size_t size) {
  if (fail_this("pvalloc", size)) return failed();
  return counted(__libc_pvalloc(size));
}

/* For self-tests (shims/tests/heap_probe.c): the counters while the process runs. */
EXPORT uint64_t tlslab_heap_attempts(void) { return __atomic_load_n(&attempts, __ATOMIC_RELAXED); }
EXPORT int64_t tlslab_heap_outstanding(void) { return __atomic_load_n(&outstanding_bytes, __ATOMIC_RELAXED); }

/* --- settings, start and exit -------------------------------------------------------------- */

/* Under valgrind or a sanitizer, malloc belongs to them: this shim would count nothing. The
 * sanitizers are found by weak references (no dlsym: it allocates, and a failed lookup leaves a
 * dlerror buffer that a later call frees). */
extern void __asan_init(void) __attribute__((weak));
extern void __msan_init(void) __attribute__((weak));
extern void __tsan_init(void) __attribute__((weak));
extern void __hwasan_init(void) __attribute__((weak));

static const char *replaced_by(void) {
  if (RUNNING_ON_VALGRIND) return "valgrind";
  if (__asan_init) return "asan";
  if (__msan_init) return "msan";
  if (__tsan_init) return "tsan";
  if (__hwasan_init) return "hwasan";
  return NULL;
}

static void bad_setting(const char *name, const char *value) {
  char line[600];
  snprintf(line, sizeof line, "tlslab-heap-shim: bad %s=%.500s (see shims/README.md)", name, value);
  shim_emit("", line);
  _exit(2);
}

static uint64_t env_u64(const char *name) {
  const char *v = getenv(name);
  if (!v || !*v) return 0;
  char *end;
  errno = 0;
  unsigned long long n = strtoull(v, &end, 10);
  if (errno || *end || v[0] == '-') bad_setting(name, v);
  return n;
}

static enum live_mode env_live(void) {
  const char *v = getenv("TLSLAB_HEAP_LIVE");
  if (!v || !*v || !strcmp(v, "off")) return LIVE_OFF;
  if (!strcmp(v, "sizes")) return LIVE_SIZES;
  if (!strcmp(v, "stacks")) return LIVE_STACKS;
  bad_setting("TLSLAB_HEAP_LIVE", v);
  return LIVE_OFF;
}

/* Reads the settings; no allocation here (it runs inside the process's first malloc). */
static void configure(void) {
  configured = 1;
  if (!shim_in_scope()) { /* a wrapper that starts the client passes LD_PRELOAD on */
    dormant = 1;
    return;
  }
  int saved = errno;
  fail_nth = env_u64("TLSLAB_HEAP_FAIL_NTH");
  fail_backtrace = env_u64("TLSLAB_HEAP_FAIL_BACKTRACE") != 0;
  shim_env_copy("TLSLAB_HEAP_REPORT", report_path, sizeof report_path);
  shim_env_copy("TLSLAB_HEAP_TRACE", trace_path, sizeof trace_path);
  if (trace_path[0]) { /* a raw mmap: no allocation inside the process's first malloc */
    void *table = (void *)syscall(SYS_mmap, NULL, (size_t)TRACE_MAX * sizeof *trace, PROT_READ | PROT_WRITE,
                                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (table == MAP_FAILED) bad_setting("TLSLAB_HEAP_TRACE (no room for its table)", trace_path);
    trace = table;
  }
  enum live_mode live = env_live();
  if (live != LIVE_OFF) live_start(live);
  errno = saved;
}

__attribute__((constructor(101))) static void heap_shim_start(void) {
  if (!configured) configure();
  if (dormant) return;
  const char *by = replaced_by();
  if (by) {
    char line[300];
    snprintf(line, sizeof line,
             "tlslab-heap-shim: refusing to run under %s: it replaces malloc, so this shim would count "
             "nothing (run without the heap shim, or without %s)", by, by);
    shim_emit("", line);
    _exit(REFUSED_EXIT);
  }
  if (live_mode() == LIVE_STACKS || fail_backtrace || trace) { /* load the unwinder now, outside the count */
    void *frame;
    inside = 1;
    backtrace(&frame, 1);
    inside = 0;
  }
  shim_unset_preload();
}

/* The objects mapped now, each as its PT_LOAD ranges: a frame's (file, offset) at exit. */
#define TRACE_OBJECTS 256
static struct {
  uintptr_t base, low, high;
  uint64_t name_hash;
} objects[TRACE_OBJECTS];
static int object_count;

static uint64_t fnv(uint64_t h, const void *data, size_t len) {
  const unsigned char *p = data;
  for (size_t i = 0; i < len; i++) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

static int note_object(struct dl_phdr_info *info, size_t size, void *unused) {
  (void)size, (void)unused;
  if (object_count == TRACE_OBJECTS) return 1;
  uintptr_t low = UINTPTR_MAX, high = 0;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD) continue;
    uintptr_t from = info->dlpi_addr + ph->p_vaddr;
    if (from < low) low = from;
    if (from + ph->p_memsz > high) high = from + ph->p_memsz;
  }
  const char *name = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : "(main)";
  const char *base = strrchr(name, '/');
  base = base ? base + 1 : name;
  objects[object_count].base = info->dlpi_addr;
  objects[object_count].low = low;
  objects[object_count].high = high;
  objects[object_count].name_hash = fnv(14695981039346656037ull, base, strlen(base));
  object_count++;
  return 0;
}

static uint64_t site_hash(const struct trace_slot *slot) {
  uint64_t h = 14695981039346656037ull;
  for (int f = 0; f < slot->count; f++) {
    uintptr_t a = (uintptr_t)slot->frames[f];
    uint64_t name = 0, offset = a; /* outside every object (a JIT, the vdso): the address itself */
    for (int o = 0; o < object_count; o++) {
      if (a >= objects[o].low && a < objects[o].high) {
        name = objects[o].name_hash;
        offset = a - objects[o].base;
        break;
      }
    }
    h = fnv(h, &name, sizeof name);
    h = fnv(h, &offset, sizeof offset);
  }
  return h;
}

static void write_trace(void) {
  int fd = (int)syscall(SYS_openat, AT_FDCWD, trace_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return;
  inside = 1; /* nothing below is counted, should libc allocate */
  dl_iterate_phdr(note_object, NULL);
  char buf[8192];
  size_t at = 0;
  uint64_t traced = attempts < TRACE_MAX ? attempts : TRACE_MAX;
  for (uint64_t n = 1; n <= traced; n++) {
    if (at > sizeof buf - 64) {
      syscall(SYS_write, fd, buf, at);
      at = 0;
    }
    at += (size_t)snprintf(buf + at, sizeof buf - at, "%" PRIu64 " %016" PRIx64 "\n", trace[n - 1].size,
                           site_hash(&trace[n - 1]));
  }
  syscall(SYS_write, fd, buf, at);
  syscall(SYS_close, fd);
  inside = 0;
}

__attribute__((destructor(101))) static void heap_shim_report(void) {
  if (dormant) return;
  if (trace) write_trace();
  static char text[65536];
  size_t at = (size_t)snprintf(
      text, sizeof text,
      "tlslab-heap-shim {\"attempts\":%" PRIu64 ",\"allocations\":%" PRIu64 ",\"frees\":%" PRIu64
      ",\"failures\":%" PRIu64 ",\"outstanding_bytes\":%" PRId64 ",\"outstanding_blocks\":%" PRId64
      ",\"peak_bytes\":%" PRId64 ",\"fail_nth\":%" PRIu64 ",\"nth_reached\":%s,\"nth_call\":\"%s\""
      ",\"nth_size\":%" PRIu64 ",\"fds_open\":%d,\"allocated_bytes\":%" PRIu64,
      attempts, allocations, frees, failures, outstanding_bytes, outstanding_blocks, peak_bytes, fail_nth,
      nth_reached ? "true" : "false", nth_call, nth_size, shim_open_fds(), allocated_bytes);
  if (live_mode() != LIVE_OFF) at += live_sizes_json(text + at, sizeof text - at - 2);
  at += (size_t)snprintf(text + at, sizeof text - at, "}\n");
  if (live_mode() == LIVE_STACKS) at += live_stacks_text(text + at, sizeof text - at - 1);
  if (at > 0 && text[at - 1] == '\n') text[at - 1] = '\0'; /* shim_emit ends the text */
  shim_emit(report_path, text);
}
