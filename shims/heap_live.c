/* The heap shim's table of live blocks (TLSLAB_HEAP_LIVE=sizes|stacks): which blocks are still
 * outstanding at exit, their sizes and, with stacks, where they were allocated. A leak's count
 * says that something leaked; this says what. The table lives in its own mapping (never in the
 * heap it watches) and is guarded by a spin lock: it is only used for one short diagnostic run.
 */
#define _GNU_SOURCE
#include "heap_live.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#define LIVE_BITS 16 /* at most 65,536 slots; tracking stops (and says so) past three quarters: a run the sweep
                      * makes (one attempt) keeps a few thousand blocks live at most */
#define FIRST_BITS 12 /* the table starts at 4,096 slots and doubles at three quarters full, so a run touches
                       * the pages its live blocks need (a sweep run: 128 KiB), not 1 MiB of page faults */

struct entry {
  uintptr_t ptr; /* 0: empty */
  size_t size;
};

/* Two mappings: the stacks (64 bytes a slot) only in stacks mode. Every page a run touches is a
 * page fault (about 10 us on this machine kind) and the walk at exit reads every slot: 4 MiB took
 * 10 ms more of every sweep run, 1 MiB 3 ms more than the 128 KiB a grown table needs. */
static struct entry *table;
static void *(*stacks)[LIVE_FRAMES];
static unsigned bits = FIRST_BITS;
static size_t used;
static int overflow;
static enum live_mode mode;
static char spin;

static void lock(void) {
  while (__atomic_test_and_set(&spin, __ATOMIC_ACQUIRE)) {
  }
}

static void unlock(void) { __atomic_clear(&spin, __ATOMIC_RELEASE); }

static size_t slot_of(uintptr_t p) { return (size_t)(((uint64_t)(p >> 4) * 0x9E3779B97F4A7C15ull) >> (64 - bits)); }

#define MASK (((size_t)1 << bits) - 1)

static void *map(size_t bytes) {
  void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

int live_start(enum live_mode m) {
  table = map(sizeof(struct entry) << bits);
  if (table && m == LIVE_STACKS) stacks = map(sizeof *stacks << bits);
  mode = table && (m != LIVE_STACKS || stacks) ? m : LIVE_OFF;
  if (mode == LIVE_OFF) table = NULL;
  return mode != LIVE_OFF;
}

enum live_mode live_mode(void) { return table ? mode : LIVE_OFF; }

/* Twice the slots, every entry put in again (under the lock); 0 when no new mapping could be made. */
static int grow(void) {
  struct entry *old = table;
  void *(*old_stacks)[LIVE_FRAMES] = stacks;
  size_t old_slots = MASK + 1;
  struct entry *bigger = map(sizeof(struct entry) << (bits + 1));
  void *(*bigger_stacks)[LIVE_FRAMES] = stacks ? map(sizeof *stacks << (bits + 1)) : NULL;
  if (!bigger || (stacks && !bigger_stacks)) {
    if (bigger) munmap(bigger, sizeof(struct entry) << (bits + 1));
    return 0;
  }
  bits++;
  table = bigger;
  stacks = bigger_stacks;
  for (size_t k = 0; k < old_slots; k++) {
    if (!old[k].ptr) continue;
    size_t i = slot_of(old[k].ptr);
    while (table[i].ptr) i = (i + 1) & MASK;
    table[i] = old[k];
    if (stacks) memcpy(stacks[i], old_stacks[k], sizeof stacks[i]);
  }
  munmap(old, sizeof(struct entry) * old_slots);
  if (old_stacks) munmap(old_stacks, sizeof *old_stacks * old_slots);
  return 1;
}

void live_add(void *p, size_t size, void *const *stack, int frames) {
  if (!table || !p) return;
  lock();
  if (used >= (MASK + 1) / 4 * 3 && (bits == LIVE_BITS || !grow())) {
    overflow = 1;
  } else {
    size_t i = slot_of((uintptr_t)p);
    while (table[i].ptr && table[i].ptr != (uintptr_t)p) i = (i + 1) & MASK;
    if (!table[i].ptr) used++;
    table[i].ptr = (uintptr_t)p;
    table[i].size = size;
    if (stacks) {
      memset(stacks[i], 0, sizeof stacks[i]);
      for (int f = 0; f < frames && f < LIVE_FRAMES; f++) stacks[i][f] = stack[f];
    }
  }
  unlock();
}

/* Linear probing with backward-shift deletion: no tombstones, lookups stay short. */
void live_remove(void *p) {
  if (!table || !p) return;
  lock();
  size_t i = slot_of((uintptr_t)p);
  while (table[i].ptr && table[i].ptr != (uintptr_t)p) i = (i + 1) & MASK;
  if (table[i].ptr) {
    used--;
    for (size_t j = (i + 1) & MASK; table[j].ptr; j = (j + 1) & MASK) {
      size_t home = slot_of(table[j].ptr);
      /* move j back into the hole at i when its home is not in (i, j] */
      if (((j - home) & MASK) >= ((j - i) & MASK)) {
        table[i] = table[j];
        if (stacks) memcpy(stacks[i], stacks[j], sizeof stacks[i]);
        i = j;
      }
    }
    table[i].ptr = 0;
  }
  unlock();
}

static size_t append(char *out, size_t at, size_t cap, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static size_t append(char *out, size_t at, size_t cap, const char *fmt, ...) {
  if (at >= cap) return at;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(out + at, cap - at, fmt, ap);
  va_end(ap);
  return n < 0 ? at : at + (size_t)n;
}

static void sort_sizes(size_t *v, size_t n) {
  for (size_t i = 1; i < n; i++)
    for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
      size_t t = v[j];
      v[j] = v[j - 1];
      v[j - 1] = t;
    }
}

size_t live_sizes_json(char *out, size_t cap) {
  static size_t sizes[LIVE_LISTED];
  size_t n = 0, at = 0;
  for (size_t i = 0; table && i <= MASK && n < LIVE_LISTED; i++)
    if (table[i].ptr) sizes[n++] = table[i].size;
  sort_sizes(sizes, n);
  at = append(out, at, cap, ",\"live_overflow\":%s,\"live_sizes\":[", overflow ? "true" : "false");
  for (size_t i = 0; i < n; i++) at = append(out, at, cap, "%s%zu", i ? "," : "", sizes[i]);
  return append(out, at, cap, "]");
}

size_t live_stacks_text(char *out, size_t cap) {
  size_t at = 0, listed = 0;
  for (size_t i = 0; table && i <= MASK && listed < LIVE_LISTED; i++) {
    if (!table[i].ptr) continue;
    listed++;
    at = append(out, at, cap, "tlslab-heap-shim-live %zu bytes:", table[i].size);
    for (int f = 0; stacks && f < LIVE_FRAMES && stacks[i][f]; f++) {
      Dl_info info;
      void *pc = stacks[i][f];
      if (dladdr(pc, &info) && info.dli_sname)
        at = append(out, at, cap, " %s+0x%tx", info.dli_sname, (char *)pc - (char *)info.dli_saddr);
      else if (dladdr(pc, &info) && info.dli_fname)
        at = append(out, at, cap, " %s+0x%tx", strrchr(info.dli_fname, '/') ? strrchr(info.dli_fname, '/') + 1
                                                                               : info.dli_fname,
                    (char *)pc - (char *)info.dli_fbase);
      else
        at = append(out, at, cap, " %p", pc);
    }
    at = append(out, at, cap, "\n");
  }
  return at;
}
