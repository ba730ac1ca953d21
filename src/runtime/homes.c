/* Home GPUs (tg_runtime_opts.tile_homes): with several CUDA workers in a process, the matrix
 * layer gives each tile a home worker (2D block-cyclic over them, as tiles over ranks), and a
 * task runs on the home of its largest homed buffer (ties: the first it writes, then the first
 * it reads), so a tile is built, converted and updated where it lives, and between GPUs only
 * the smaller operands travel: panels in the tile Cholesky, right-hand sides in the solves.
 * Left to dmdas, the tiles of a KRR run moved between GPUs on every step (docs/PERFORMANCE.md,
 * "Tiles on home GPUs"). Tasks sent to a chosen worker by their submitter and codelets without
 * a CUDA path are left alone. */
#include "runtime/internal.h"

static struct {
    int n;                           /* homes in use (CUDA workers), 0: off */
    int worker[STARPU_NMAXWORKERS];  /* home → StarPU worker id */
} homes;

void tg_homes_start(int on) {
    homes.n = 0;
    int ids[STARPU_NMAXWORKERS];
    int n = starpu_worker_get_ids_by_type(STARPU_CUDA_WORKER, ids, STARPU_NMAXWORKERS);
    if (!on || n < 2) return;
    for (int i = 0; i < n; i++) homes.worker[i] = ids[i];
    homes.n = n;
}

void tg_homes_stop(void) { homes.n = 0; }

int tg_runtime_homes(void) { return homes.n; }

void tg_runtime_home(starpu_data_handle_t h, int home) {
    if (homes.n < 2 || home < 0) return;
    uintptr_t notes = tg_handle_notes(h) & TG_NOTE_SEEN;
    tg_handle_notes_set(h, notes | (uintptr_t)(home % homes.n + 1) << 1);
}

/* A buffer's home + 1, 0 for none. */
static int home_of(starpu_data_handle_t h) { return (int)(tg_handle_notes(h) >> 1); }

void tg_homes_place(struct starpu_task *task) {
    if (homes.n < 2 || task->execute_on_a_specific_worker || !task->cl ||
        !task->cl->cuda_funcs[0])
        return;
    int best = 0, best_writes = 0;
    size_t best_size = 0;
    for (unsigned b = 0; b < STARPU_TASK_GET_NBUFFERS(task); b++) {
        starpu_data_handle_t h = STARPU_TASK_GET_HANDLE(task, b);
        int home = h ? home_of(h) : 0;
        if (!home) continue;
        size_t size = starpu_data_get_size(h);
        int writes = (STARPU_TASK_GET_MODE(task, b) & STARPU_W) != 0;
        if (!best || size > best_size || (size == best_size && writes && !best_writes)) {
            best = home;
            best_size = size;
            best_writes = writes;
        }
    }
    if (!best) return;
    task->execute_on_a_specific_worker = 1;
    task->workerid = (unsigned)homes.worker[best - 1];
}
