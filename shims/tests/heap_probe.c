/* heap_probe: exercises the heap shim; selftest_heap.py compares its lines and the shim's report.
 *
 *   heap_probe STEP...
 *   nothing          exit at once (the baseline the other steps are measured against)
 *   leak             leave one block from each allocation function, free 1,000 others:
 *                    "leak -> BLOCKS BYTES" (what the shim must report above the baseline)
 *   errno            "errno -> kept|changed": free() must not change errno
 *   nth              ten malloc(1001..1010): "nth -> START FAILED..." (START: the shim's count before)
 *   openssl          fetch and use SHA-256, then leave the rest to OpenSSL's atexit cleanup:
 *                    "openssl -> OUTSTANDING" (bytes held just before main returns)
 *   openssl-cleanup  the same, then OPENSSL_cleanup() explicitly
 *   fd               leave /dev/null open
 *   env              LD_PRELOAD as this process sees it
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

static uint64_t shim_attempts(void) {
  uint64_t (*f)(void) = (uint64_t(*)(void))dlsym(RTLD_DEFAULT, "tlslab_heap_attempts");
  return f ? f() : 0;
}

static int64_t shim_outstanding(void) {
  int64_t (*f)(void) = (int64_t(*)(void))dlsym(RTLD_DEFAULT, "tlslab_heap_outstanding");
  return f ? f() : -1;
}

static void *keep[16];
static int kept;

static void hold(void *p, size_t *bytes) {
  keep[kept++] = p;
  *bytes += malloc_usable_size(p);
}

/* One block left from every allocation function; each realloc form moves or resizes one. */
static void leak(void) {
  size_t bytes = 0;
  void *churn[1000];
  for (int i = 0; i < 1000; i++) churn[i] = malloc((size_t)(i * 7 % 5000));
  for (int i = 0; i < 1000; i++) free(churn[i]);
  hold(malloc(100), &bytes);
  hold(calloc(10, 10), &bytes);
  void *grow = malloc(10);
  grow = realloc(grow, 3000);
  hold(grow, &bytes);
  hold(realloc(NULL, 77), &bytes);
  hold(reallocarray(NULL, 9, 9), &bytes);
  void *aligned = NULL;
  if (posix_memalign(&aligned, 64, 200) == 0) hold(aligned, &bytes);
  hold(aligned_alloc(64, 128), &bytes);
  hold(memalign(32, 50), &bytes);
  hold(valloc(10), &bytes);
  hold(pvalloc(10), &bytes);
  void *gone = malloc(50);
  if (realloc(gone, 0) != NULL) printf(" realloc(p,0)-not-NULL");
  printf(" %d %zu", kept, bytes);
}

static void nth(void) {
  uint64_t start = shim_attempts();
  printf(" %llu", (unsigned long long)start);
  void *blocks[10];
  for (int i = 0; i < 10; i++) {
    blocks[i] = malloc(1001 + (size_t)i);
    if (!blocks[i]) printf(" %d", i + 1);
  }
  for (int i = 0; i < 10; i++) free(blocks[i]);
}

/* LIVE blocks at once (the live table grows from 4,096 slots), KEPT of them (7,777 bytes each)
 * left at exit, the rest freed: the report must list every kept one. */
static void many(int live, int left) {
  static void *blocks[60000];
  for (int i = 0; i < live; i++) blocks[i] = malloc(i < left ? 7777 : 100 + (size_t)(i % 7));
  for (int i = left; i < live; i++) free(blocks[i]);
  printf(" %d", left);
}

static void openssl(int cleanup) {
  unsigned char out[32];
  unsigned int len = 0;
  EVP_MD *md = EVP_MD_fetch(NULL, "SHA256", NULL);
  EVP_Digest("abc", 3, out, &len, md, NULL);
  EVP_MD_free(md);
  printf(" %lld", (long long)shim_outstanding());
  if (cleanup) OPENSSL_cleanup();
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    const char *s = argv[i];
    printf("%s ->", s);
    if (!strcmp(s, "nothing")) {
    } else if (!strcmp(s, "leak")) {
      leak();
    } else if (!strcmp(s, "errno")) {
      void *p = malloc(10);
      errno = EILSEQ;
      free(p);
      printf(" %s", errno == EILSEQ ? "kept" : "changed");
    } else if (!strcmp(s, "nth")) {
      nth();
    } else if (!strcmp(s, "many")) {
      many(20000, 100);
    } else if (!strcmp(s, "flood")) {
      many(60000, 60000);
    } else if (!strcmp(s, "openssl")) {
      openssl(0);
    } else if (!strcmp(s, "openssl-cleanup")) {
      openssl(1);
    } else if (!strcmp(s, "fd")) {
      printf(" %d", open("/dev/null", O_RDONLY) >= 0);
    } else if (!strcmp(s, "env")) {
      const char *v = getenv("LD_PRELOAD");
      printf(" %s", v ? v : "(unset)");
    } else {
      fprintf(stderr, "heap_probe: unknown step %s\n", s);
      return 2;
    }
    printf("\n");
  }
  return 0;
}
