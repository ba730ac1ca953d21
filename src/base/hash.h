/* Hashes of bytes, none a defence against tampering. FNV-1a, 64 bits: a cheap hash for hash
 * tables and for telling argument lists apart, one byte at a time. tg_xxh64: XXH64 (xxHash's
 * 64-bit hash, seed 0, as `xxhsum -H64` prints it on a little-endian machine), four independent
 * lanes of 8-byte words, ten times FNV-1a's speed: the checksum of files (a KRR model's), fed
 * in pieces as they are written or read. tg_hash_bytes and tg_hash_bulk: XXH64 for bulk data
 * (telling whole files and filesets apart), the latter on every CPU. */
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

/* XXH64's state: the lanes, the byte count, and the bytes of a stripe not yet complete. */
typedef struct {
    uint64_t lane[4], total;
    unsigned char stripe[32];
    size_t held;
} tg_xxh64;

void tg_xxh64_init(tg_xxh64 *h);
void tg_xxh64_add(tg_xxh64 *h, const void *p, size_t n);
/* The hash of every byte added so far (the state is unchanged: more may be added). */
uint64_t tg_xxh64_value(const tg_xxh64 *h);

/** XXH64 of the 8 bytes of @p h then the @p n bytes at @p p: continues @p h (TG_FNV1A_INIT to
 * start). The same bytes give the same value whatever their alignment. */
uint64_t tg_hash_bytes(uint64_t h, const void *p, size_t n);
/** tg_hash_bytes's counterpart for gigabytes: pieces of 4 MiB hashed on every CPU
 * (tg_parallel_for), then the pieces' hashes; another value than tg_hash_bytes of the same
 * bytes. */
uint64_t tg_hash_bulk(uint64_t h, const void *p, size_t n);
#endif
