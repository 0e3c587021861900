/* The heap shim's table of live blocks: see heap_live.c. */
#pragma once

#include <stddef.h>

#define LIVE_FRAMES 16  /* return addresses kept per block (stacks mode) */
#define LIVE_LISTED 256 /* blocks listed in the report at most */

enum live_mode { LIVE_OFF, LIVE_SIZES, LIVE_STACKS };

/* Map the table; 0 if it could not be mapped (the run goes on without it). */
int live_start(enum live_mode mode);
enum live_mode live_mode(void);
void live_add(void *p, size_t size, void *const *stack, int frames);
void live_remove(void *p);
/* `,"live_overflow":B,"live_sizes":[...]` (sorted) for the report line; returns its length. */
size_t live_sizes_json(char *out, size_t cap);
/* One line per live block, `tlslab-heap-shim-live N bytes: frame...`; returns the length. */
size_t live_stacks_text(char *out, size_t cap);
