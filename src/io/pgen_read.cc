// The C face on pgenlib's reader (pgen_read.h). pgenlib reads in its per-variant fread() mode:
// one PgenFileInfo holds the file's index (record offsets and types), and each PgenReader has
// its own FILE and buffers over it, so that threads read different variants at once. The
// memory pgenlib asks for comes from cachealigned_malloc, as its callers must provide; each
// block is freed once, by whoever allocated it here.
#include "io/pgen_read.h"

#include <new>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <pgenlib/pgenlib_read.h>

using namespace plink2;

struct tg_pgr_file {
    PgenFileInfo fi;
    unsigned char *alloc;   // pgfi_alloc: the record offsets and types live here
    uintptr_t *allele_idx;  // the allele offsets given to pgenlib (NULL: all biallelic)
    uintptr_t *nonref;      // room for the file's own nonref flags, when it stores them
    uint32_t max_vrec_width;
    uintptr_t pgr_cachelines;  // what each reader needs
};

struct tg_pgr {
    PgenReader r;
    unsigned char *alloc;
    uintptr_t *genovec;
    uint32_t n_samples;
};

// pgenlib's messages read "Error: WHAT.\n": keep WHAT.
static void copy_msg(char *msg, const char *errstr) {
    if (!strncmp(errstr, "Error: ", 7)) errstr += 7;
    size_t n = strlen(errstr);
    while (n && (errstr[n - 1] == '\n' || errstr[n - 1] == '.')) n--;
    snprintf(msg, TG_PGR_MSG, "%.*s", (int)n, errstr);
}

// What a failed read means, for the codes that PgrGet returns without a message.
static const char *code_msg(PglErr e) {
    if (e == kPglRetReadFail) return "read failure (the file is truncated or unreadable)";
    if (e == kPglRetMalformedInput) return "malformed variant record";
    if (e == kPglRetNomem) return "out of memory";
    return "pgenlib cannot read it";
}

static void *aligned(uintptr_t bytes) {
    void *p = nullptr;
    return cachealigned_malloc(bytes ? bytes : kCacheline, &p) ? nullptr : p;
}

void tg_pgr_file_close(tg_pgr_file *f) {
    if (!f) return;
    PglErr e = kPglRetSuccess;
    CleanupPgfi(&f->fi, &e);
    aligned_free_cond(f->alloc);
    aligned_free_cond(f->allele_idx);
    aligned_free_cond(f->nonref);
    delete f;
}

// pgenlib wants the offsets of each variant's first allele, 64-byte aligned (pgenlib_read.h).
static int set_alleles(tg_pgr_file *f, uint32_t n, const uint32_t *allele_ct) {
    if (!(f->allele_idx = static_cast<uintptr_t *>(aligned((n + 1) * sizeof(uintptr_t)))))
        return 0;
    f->allele_idx[0] = 0;
    uint32_t max = 2;
    for (uint32_t v = 0; v < n; v++) {
        f->allele_idx[v + 1] = f->allele_idx[v] + allele_ct[v];
        if (allele_ct[v] > max) max = allele_ct[v];
    }
    f->fi.allele_idx_offsets = f->allele_idx;
    f->fi.max_allele_ct = max;  // phase 1 reset it to 2 (pgenlib_read.cc's note)
    return 1;
}

int tg_pgr_file_open(const char *path, uint32_t n_variants, uint32_t n_samples,
                     const uint32_t *allele_ct, tg_pgr_file **out, int *dosages, char *msg) {
    char errstr[kPglErrstrBufBlen];
    PgenHeaderCtrl ctrl;
    uintptr_t cachelines = 0;
    struct stat sb;
    tg_pgr_file *f = new (std::nothrow) tg_pgr_file();
    *out = nullptr;
    if (!f) {
        snprintf(msg, TG_PGR_MSG, "out of memory");
        return 1;
    }
    PreinitPgfi(&f->fi);
    if (PgfiInitPhase1(path, nullptr, n_variants, n_samples, &ctrl, &f->fi, &cachelines, errstr)) {
        copy_msg(msg, errstr);
        goto fail;
    }
    if ((allele_ct && !set_alleles(f, n_variants, allele_ct)) ||
        // the file stores its allele counts or nonref flags: pgenlib loads them into our room
        (!f->allele_idx && (ctrl & 0x30) &&
         !(f->fi.allele_idx_offsets = f->allele_idx = static_cast<uintptr_t *>(
               aligned((n_variants + 1) * sizeof(uintptr_t))))) ||
        ((ctrl & 0xc0) == 0xc0 &&
         !(f->fi.nonref_flags = f->nonref = static_cast<uintptr_t *>(
               aligned(BitCtToWordCt(n_variants) * kBytesPerWord)))) ||
        (cachelines && !(f->alloc = static_cast<unsigned char *>(aligned(cachelines * kCacheline))))) {
        snprintf(msg, TG_PGR_MSG, "out of memory for the index of %u variants", n_variants);
        goto fail;
    }
    if (PgfiInitPhase2(ctrl, allele_ct != nullptr, 0, 0, 0, n_variants, &f->max_vrec_width, &f->fi,
                       f->alloc, &f->pgr_cachelines, errstr)) {
        copy_msg(msg, errstr);
        goto fail;
    }
    // the index gives where the last record ends: a shorter file was cut (pgenlib would find
    // it only when reading there)
    if (f->fi.var_fpos && stat(path, &sb) == 0 &&
        static_cast<uint64_t>(sb.st_size) < f->fi.var_fpos[n_variants]) {
        snprintf(msg, TG_PGR_MSG, "truncated: %lld bytes, where its index ends the last variant "
                 "at byte %llu", static_cast<long long>(sb.st_size),
                 static_cast<unsigned long long>(f->fi.var_fpos[n_variants]));
        goto fail;
    }
    if ((f->fi.gflags & kfPgenGlobalMultiallelicHardcallFound) && !allele_ct) {
        snprintf(msg, TG_PGR_MSG, "it holds multi-allelic variants where the .pvar lists none");
        goto fail;
    }
    *dosages = (f->fi.gflags & kfPgenGlobalDosagePresent) != 0;
    *out = f;
    return 0;
fail:
    tg_pgr_file_close(f);
    return 1;
}

void tg_pgr_free(tg_pgr *r) {
    if (!r) return;
    PglErr e = kPglRetSuccess;
    CleanupPgr(&r->r, &e);
    aligned_free_cond(r->alloc);  // fread_buf points into it: not freed separately
    aligned_free_cond(r->genovec);
    delete r;
}

int tg_pgr_new(tg_pgr_file *f, const char *path, tg_pgr **out, char *msg) {
    tg_pgr *r = new (std::nothrow) tg_pgr();
    *out = nullptr;
    if (!r) {
        snprintf(msg, TG_PGR_MSG, "out of memory");
        return 1;
    }
    PreinitPgr(&r->r);
    r->n_samples = f->fi.raw_sample_ct;
    // PgrGet writes whole vectors
    r->genovec = static_cast<uintptr_t *>(aligned(NypCtToVecCt(r->n_samples) * kBytesPerVec));
    r->alloc = static_cast<unsigned char *>(aligned(f->pgr_cachelines * kCacheline));
    if (!r->genovec || !r->alloc) {
        snprintf(msg, TG_PGR_MSG, "out of memory for a reader");
        tg_pgr_free(r);
        return 1;
    }
    PglErr e = PgrInit(path, f->max_vrec_width, &f->fi, &r->r, r->alloc);
    if (e) {
        snprintf(msg, TG_PGR_MSG, "cannot start a reader: %s", code_msg(e));
        tg_pgr_free(r);
        return 1;
    }
    *out = r;
    return 0;
}

int tg_pgr_get(tg_pgr *r, uint32_t vidx, const uint64_t **calls, char *msg) {
    static_assert(sizeof(uintptr_t) == sizeof(uint64_t), "64-bit words");
    PgrSampleSubsetIndex all;
    PgrClearSampleSubsetIndex(nullptr, &all);  // every sample: no subset index
    PglErr e = PgrGet(nullptr, all, r->n_samples, vidx, &r->r, r->genovec);
    if (e) {
        snprintf(msg, TG_PGR_MSG, "%s", code_msg(e));
        return 1;
    }
    *calls = reinterpret_cast<const uint64_t *>(r->genovec);
    return 0;
}

int tg_pgr_has_dosage(const tg_pgr *r, uint32_t vidx) {
    return VrtypeDosage(PgrGetVrtype(&r->r, vidx)) != 0;
}
