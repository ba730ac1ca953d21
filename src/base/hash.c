/* tg_hash (the public name of tg_fnv1a), tg_hash_bytes and tg_hash_bulk (see hash.h), and
 * tg_file_hash, a file's content through tg_hash_bulk. */
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

/* Odd 64-bit constants with bits spread over the word (the golden ratio's and two others). */
#define K0 0x9e3779b97f4a7c15ULL
#define K1 0xbf58476d1ce4e5b9ULL
#define K2 0x94d049bb133111ebULL

/* A word into a lane: both steps are bijections of the lane, so two inputs that differ in one
 * word leave that lane different; the shift brings the product's high bits down. Each lane
 * shifts by its own amount (@p s): gcc then keeps the lanes in scalar registers, where a 64-bit
 * multiply is one instruction, instead of SSE2 vectors that build it from three (5× slower). */
static inline uint64_t lane(uint64_t l, uint64_t w, int s) {
    l = (l ^ w) * K1;
    return l ^ (l >> s);
}

static inline uint64_t word(const unsigned char *p) {
    uint64_t w;
    memcpy(&w, p, sizeof w); /* any alignment; one load on x86-64 and arm64 */
    return w;
}

/* Mixes every bit of @p x into every other (a multiply-xorshift finaliser). */
static inline uint64_t finish(uint64_t x) {
    x = (x ^ (x >> 31)) * K1;
    x = (x ^ (x >> 27)) * K2;
    return x ^ (x >> 33);
}

uint64_t tg_hash_bytes(uint64_t h, const void *p, size_t n) {
    const unsigned char *c = p;
    uint64_t l0 = h, l1 = h ^ K0, l2 = h ^ K1, l3 = h ^ K2;
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        l0 = lane(l0, word(c + i), 29);
        l1 = lane(l1, word(c + i + 8), 30);
        l2 = lane(l2, word(c + i + 16), 31);
        l3 = lane(l3, word(c + i + 24), 32);
    }
    /* the last 0 to 31 bytes, the partial word zero-padded: the length below tells them */
    uint64_t last[4] = {0};
    if (n > i) memcpy(last, c + i, n - i);
    l0 = lane(l0, last[0], 29);
    l1 = lane(l1, last[1], 30);
    l2 = lane(l2, last[2], 31);
    l3 = lane(l3, last[3], 32);
    /* the lanes in turn, each step a bijection of out: a difference in one lane cannot be
     * undone by another's, as it could if they were combined by a symmetric operation */
    uint64_t out = finish(n * K0 ^ h);
    out = lane(out, finish(l0), 29);
    out = lane(out, finish(l1), 30);
    out = lane(out, finish(l2), 31);
    out = lane(out, finish(l3), 32);
    return finish(out);
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
    uint64_t small[64], out = finish(h ^ n);
    bulk_job jb = {p, n, h, np <= 64 ? small : malloc(np * sizeof *jb.piece)};
    if (jb.piece) tg_parallel_for((int64_t)np, hash_piece, &jb);
    /* out of memory for the pieces' table: piece by piece on this core, to the same value */
    for (size_t k = 0; k < np; k++)
        out = lane(out, jb.piece ? jb.piece[k] : piece_hash(&jb, k), 29);
    if (jb.piece != small) free(jb.piece);
    return finish(out);
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
    if (m) {
        *hash = tg_hash_bulk(TG_FNV1A_INIT, m, (size_t)*bytes);
        munmap(m, (size_t)*bytes);
    }
    return TG_OK;
}
