/* Large allocations: zeroed memory on huge pages where the kernel gives them. */
#ifndef TG_BASE_MEM_H
#define TG_BASE_MEM_H
#include "tilegwas.h"

/** tg_calloc_n whose 2 MiB-aligned interior asks for transparent huge pages (madvise), before
 * any page is touched: a first write from many threads then takes one fault per 2 MiB instead
 * of one per 4 KiB, where the faults' page-table locks cost more than the writes. */
void *tg_calloc_huge(int64_t n1, int64_t n2, size_t size, tg_error *err);
/** Asks for transparent huge pages in the 2 MiB-aligned interior of [p, p + bytes) (madvise; a
 * request only: where they are off, plain pages). Before the pages are touched. */
void tg_advise_huge(void *p, size_t bytes);
/** memcpy whose stores bypass the caches (non-temporal, where the CPU has them): for a buffer
 * that a device reads next by DMA, which would otherwise find its lines dirty in the cores'
 * caches. Ends with a store fence. */
void tg_copy_stream(void *dst, const void *src, size_t bytes);
#endif
