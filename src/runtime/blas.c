/* OpenBLAS's kernel choice, and its threads for calls on the host. A DYNAMIC_ARCH OpenBLAS
 * picks its kernels from the CPU model; one older than the CPU (Debian 12 ships 0.3.21) falls
 * back to its generic Prescott kernels on a model it does not know, as some virtual machines
 * report recent Xeons: DGEMM at 8 GFLOP/s a core instead of 66-74 on the H100 node
 * (docs/PERFORMANCE.md). OPENBLAS_CORETYPE overrides the choice but is read once, when the
 * library loads, so the program restarts with it set. */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "base/parallel.h"
#include "runtime/internal.h"

/* OpenBLAS's name for its kernels in use and its build options (cblas.h of OpenBLAS declares
 * them) */
char *openblas_get_corename(void);
char *openblas_get_config(void);

const char *tg_blas_core(void) { return openblas_get_corename(); }

void tg_blas_host(int on) {
    if (on && tg_runtime_started()) starpu_pause();
    openblas_set_num_threads(on ? tg_parallel_threads() : 1);
    if (!on && tg_runtime_started()) starpu_resume();
}

const char *tg_blas_better_core(const char *core, unsigned features) {
    /* x86 kernels of OpenBLAS without AVX2 (a name it reports, in any case): only these are
     * replaced, so an unknown or newer name never restarts anything */
    static const char *const narrow[] = {
        "Prescott", "Core2",     "Penryn",   "Dunnington", "Nehalem",    "Atom",
        "Sandybridge", "Opteron", "Opteron_SSE3", "Barcelona", "Bobcat", "Bulldozer",
        "Piledriver", "Steamroller", "Katmai", "Coppermine", "Northwood", "Banias", "Athlon"};
    int old = 0;
    for (size_t i = 0; core && i < sizeof narrow / sizeof *narrow; i++)
        old |= !strcasecmp(core, narrow[i]);
    if (!old || (features & (TG_CPU_AVX2 | TG_CPU_FMA)) != (TG_CPU_AVX2 | TG_CPU_FMA)) return NULL;
    if (!(features & TG_CPU_AVX512)) return "Haswell";
    return features & TG_CPU_AVX512BF16 ? "Cooperlake" : "SkylakeX";
}

static unsigned cpu_features(void) {
    __builtin_cpu_init();
    return (__builtin_cpu_supports("avx2") ? TG_CPU_AVX2 : 0u) |
           (__builtin_cpu_supports("fma") ? TG_CPU_FMA : 0u) |
           (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                    __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl")
                ? TG_CPU_AVX512
                : 0u) |
           (__builtin_cpu_supports("avx512bf16") ? TG_CPU_AVX512BF16 : 0u);
}

void tg_blas_restart_if_generic(char **argv) {
    if (getenv("OPENBLAS_CORETYPE")) return; /* the user's choice, or ours after the restart */
    /* only a DYNAMIC_ARCH build reads OPENBLAS_CORETYPE (one built for a target ignores it) */
    const char *config = openblas_get_config();
    if (!config || !strstr(config, "DYNAMIC_ARCH")) return;
    /* test hook (tests/blas_restart.sh): the kernels OpenBLAS is said to run, so that the
     * restart is exercised where OpenBLAS knows the CPU */
    const char *core = getenv("TG_TEST_BLAS_CORE") ? getenv("TG_TEST_BLAS_CORE") : tg_blas_core();
    const char *better = tg_blas_better_core(core, cpu_features());
    if (!better) return;
    /* quietly: the log's runtime line says it (tg_runtime_describe), where a notice on stderr
     * at every run would stand beside the run's own messages */
    setenv("TG_BLAS_RESTARTED", core ? core : "default", 1);
    setenv("OPENBLAS_CORETYPE", better, 1);
    fflush(NULL);
    execv("/proc/self/exe", argv);
    /* no restart (no /proc): carry on with the slower kernels */
    unsetenv("TG_BLAS_RESTARTED");
    unsetenv("OPENBLAS_CORETYPE");
    const char *rank = tg_runtime_launcher_rank();
    if (!rank) rank = getenv("SLURM_PROCID"); /* srun without MPI */
    if (!rank || !strcmp(rank, "0"))
        fprintf(stderr, "%s: could not restart; OpenBLAS keeps its %s kernels\n", argv[0],
                core ? core : "default");
}
