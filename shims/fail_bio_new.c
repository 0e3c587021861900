/* fail_bio_new (LD_PRELOAD): every Nth BIO_new the program itself calls answers NULL.
 *
 * The client makes two memory BIOs per connection (client/transport.cc attach); with
 * TLSLAB_FAIL_BIO_NEW_EVERY=2 the second one of every connection fails, which is the path
 * where the first must be freed. Only calls from the main executable count: OpenSSL's own
 * BIO_new calls (loading the CA file) pass through untouched. At exit one line on stderr:
 *   tlslab-fail-bio-new {"calls":C,"failed":F}
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct bio_st BIO;
typedef struct bio_method_st BIO_METHOD;

static unsigned long every, calls, failed;

/* The first object dl_iterate_phdr reports is the main program. */
static int in_main_program(struct dl_phdr_info *info, size_t size, void *data) {
  uintptr_t addr = (uintptr_t)data;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    uintptr_t start = info->dlpi_addr + ph->p_vaddr;
    if (ph->p_type == PT_LOAD && addr >= start && addr < start + ph->p_memsz) return 1;
  }
  return -1; /* stop after the first object either way */
}

static int called_by_program(void *ret) { return dl_iterate_phdr(in_main_program, ret) == 1; }

__attribute__((visibility("default"))) BIO *BIO_new(const BIO_METHOD *type) {
  static BIO *(*real)(const BIO_METHOD *);
  if (!real) {
    real = (BIO * (*)(const BIO_METHOD *)) dlsym(RTLD_NEXT, "BIO_new");
    const char *v = getenv("TLSLAB_FAIL_BIO_NEW_EVERY");
    every = v ? strtoul(v, NULL, 10) : 0;
  }
  if (every && called_by_program(__builtin_return_address(0)) && ++calls % every == 0) {
    ++failed;
    return NULL;
  }
  return real(type);
}

__attribute__((destructor)) static void report(void) {
  fprintf(stderr, "tlslab-fail-bio-new {\"calls\":%lu,\"failed\":%lu}\n", calls, failed);
}
