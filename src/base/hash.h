/* Hashes of bytes for hash tables and for telling files, argument lists or whole filesets apart
 * (not checksums against tampering): FNV-1a for short keys, tg_hash_bytes for bulk data. */
#ifndef TG_HASH_H
#define TG_HASH_H
#include <stddef.h>
#include <stdint.h>

#define TG_FNV1A_INIT 0xcbf29ce484222325ULL

/** FNV-1a, 64 bits: one multiply per byte (about 1 GB/s), cheap on short keys. Chain calls to
 * hash several pieces. */
static inline uint64_t tg_fnv1a(uint64_t h, const void *p, size_t n) {
    for (const unsigned char *c = p; n--; c++) h = (h ^ *c) * 0x100000001b3ULL;
    return h;
}

/** A 64-bit hash of @p n bytes for bulk data (a genotype matrix, a whole file): four
 * independent lanes of 8-byte words, so that the multiplies overlap (several GB/s on one core,
 * docs/DESIGN-NOTES.md "Several ranks in the CLI"); continues @p h (TG_FNV1A_INIT to
 * start). The same bytes give the same value whatever their alignment. */
uint64_t tg_hash_bytes(uint64_t h, const void *p, size_t n);
/** tg_hash_bytes's counterpart for gigabytes: pieces of 4 MiB hashed on every CPU
 * (tg_parallel_for), then the pieces' hashes; another value than tg_hash_bytes of the same
 * bytes. */
uint64_t tg_hash_bulk(uint64_t h, const void *p, size_t n);
#endif
