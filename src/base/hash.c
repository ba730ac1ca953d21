/* tg_hash (the public name of tg_fnv1a); tg_xxh64 (hash.h), written from xxHash's specification
 * (github.com/Cyan4973/xxHash, doc/xxhash_spec.md), checked against xxhsum by tests/test_hash.c;
 * tg_hash_bytes and tg_hash_bulk through it, and tg_file_hash, a file's XXH64. */
#include "base/hash.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/parallel.h"
#include "tilegwas.h"

_Static_assert(TG_HASH_INIT == TG_FNV1A_INIT, "one FNV-1a offset basis");

uint64_t tg_hash(uint64_t h, const void *p, size_t n) { return tg_fnv1a(h, p, n); }

static const uint64_t P1 = 0x9E3779B185EBCA87ULL, P2 = 0xC2B2AE3D27D4EB4FULL,
                      P3 = 0x165667B19E3779F9ULL, P4 = 0x85EBCA77C2B2AE63ULL,
                      P5 = 0x27D4EB2F165667C5ULL;

static inline uint64_t rotl(uint64_t x, int r) { return x << r | x >> (64 - r); }

/* words as stored: little-endian on the machines we build for */
static inline uint64_t read64(const unsigned char *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static inline uint32_t read32(const unsigned char *p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static inline uint64_t xround(uint64_t acc, uint64_t word) {
    return rotl(acc + word * P2, 31) * P1;
}

static inline uint64_t merge(uint64_t acc, uint64_t lane) {
    return (acc ^ xround(0, lane)) * P1 + P4;
}

static void stripe(uint64_t *lane, const unsigned char *p) {
    for (int i = 0; i < 4; i++) lane[i] = xround(lane[i], read64(p + 8 * i));
}

void tg_xxh64_init(tg_xxh64 *h) {
    *h = (tg_xxh64){.lane = {P1 + P2, P2, 0, -P1}};
}

void tg_xxh64_add(tg_xxh64 *h, const void *data, size_t n) {
    if (!n) return; /* data may then be NULL, which memcpy may not be given */
    const unsigned char *p = data;
    h->total += n;
    if (h->held) { /* complete the stripe begun by the last call */
        size_t take = 32 - h->held < n ? 32 - h->held : n;
        memcpy(h->stripe + h->held, p, take);
        h->held += take, p += take, n -= take;
        if (h->held < 32) return;
        stripe(h->lane, h->stripe);
        h->held = 0;
    }
    for (; n >= 32; p += 32, n -= 32) stripe(h->lane, p);
    memcpy(h->stripe, p, n);
    h->held = n;
}

uint64_t tg_xxh64_value(const tg_xxh64 *h) {
    const uint64_t *v = h->lane;
    uint64_t x = P5;
    if (h->total >= 32) {
        x = rotl(v[0], 1) + rotl(v[1], 7) + rotl(v[2], 12) + rotl(v[3], 18);
        for (int i = 0; i < 4; i++) x = merge(x, v[i]);
    }
    x += h->total;
    const unsigned char *p = h->stripe;
    size_t n = h->held;
    for (; n >= 8; p += 8, n -= 8) x = rotl(x ^ xround(0, read64(p)), 27) * P1 + P4;
    if (n >= 4) {
        x = rotl(x ^ (uint64_t)read32(p) * P1, 23) * P2 + P3;
        p += 4, n -= 4;
    }
    for (; n; p++, n--) x = rotl(x ^ *p * P5, 11) * P1;
    x ^= x >> 33;
    x *= P2;
    x ^= x >> 29;
    x *= P3;
    return x ^ x >> 32;
}

uint64_t tg_hash_bytes(uint64_t h, const void *p, size_t n) {
    tg_xxh64 x;
    tg_xxh64_init(&x);
    tg_xxh64_add(&x, &h, sizeof h);
    tg_xxh64_add(&x, p, n);
    return tg_xxh64_value(&x);
}

#define PIECE ((size_t)4 << 20)

typedef struct {
    const unsigned char *p;
    size_t n;
    uint64_t h, *piece;
} bulk_job;

static uint64_t piece_hash(const bulk_job *jb, size_t k) {
    size_t at = k * PIECE, len = jb->n - at < PIECE ? jb->n - at : PIECE;
    return tg_hash_bytes(jb->h, jb->p + at, len);
}

static void hash_piece(void *ctx, int64_t k) {
    bulk_job *jb = ctx;
    jb->piece[k] = piece_hash(jb, (size_t)k);
}

uint64_t tg_hash_bulk(uint64_t h, const void *p, size_t n) {
    size_t np = (n + PIECE - 1) / PIECE;
    uint64_t small[64];
    bulk_job jb = {p, n, h, np <= 64 ? small : malloc(np * sizeof *jb.piece)};
    if (jb.piece) tg_parallel_for((int64_t)np, hash_piece, &jb);
    tg_xxh64 x;
    tg_xxh64_init(&x);
    tg_xxh64_add(&x, &h, sizeof h);
    tg_xxh64_add(&x, &n, sizeof n);
    /* out of memory for the pieces' table: piece by piece on this core, to the same value */
    for (size_t k = 0; k < np; k++) {
        uint64_t ph = jb.piece ? jb.piece[k] : piece_hash(&jb, k);
        tg_xxh64_add(&x, &ph, sizeof ph);
    }
    if (jb.piece != small) free(jb.piece);
    return tg_xxh64_value(&x);
}

tg_status tg_file_hash(const char *path, int64_t *bytes, uint64_t *hash, tg_error *err) {
    int fd = open(path, O_RDONLY);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb)) {
        tg_error_set(err, TG_ERR_IO, "%s: cannot read it to hash it: %s", path, strerror(errno));
        if (fd >= 0) close(fd);
        return TG_ERR_IO;
    }
    *bytes = S_ISREG(sb.st_mode) ? (int64_t)sb.st_size : -1;
    *hash = 0;
    void *m = *bytes > 0 ? mmap(NULL, (size_t)*bytes, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
    close(fd);
    if (m == MAP_FAILED)
        return tg_error_set(err, TG_ERR_IO, "%s: cannot map its %lld bytes to hash them: %s", path,
                            (long long)*bytes, strerror(errno));
    tg_xxh64 h;
    tg_xxh64_init(&h);
    if (m) {
        tg_xxh64_add(&h, m, (size_t)*bytes);
        munmap(m, (size_t)*bytes);
    }
    if (*bytes >= 0) *hash = tg_xxh64_value(&h);
    return TG_OK;
}
