/* tg_hash: the public name of tg_fnv1a (hash.h), for the command-line tool and programs. */
#include "base/hash.h"

#include "tilegwas.h"

_Static_assert(TG_HASH_INIT == TG_FNV1A_INIT, "one FNV-1a offset basis");

uint64_t tg_hash(uint64_t h, const void *p, size_t n) { return tg_fnv1a(h, p, n); }
