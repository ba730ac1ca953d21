/* FNV-1a, 64 bits: a cheap hash of bytes for hash tables and for telling files or argument
 * lists apart (not a checksum against tampering). Chain calls to hash several pieces. */
#ifndef TG_HASH_H
#define TG_HASH_H
#include <stddef.h>
#include <stdint.h>

#define TG_FNV1A_INIT 0xcbf29ce484222325ULL

static inline uint64_t tg_fnv1a(uint64_t h, const void *p, size_t n) {
    for (const unsigned char *c = p; n--; c++) h = (h ^ *c) * 0x100000001b3ULL;
    return h;
}
#endif
