/* Task traces: the records of tg_record_stop as a table and as a Gantt chart (--trace,
 * bench/sched). Both name workers through the running StarPU: call them before it stops. */
#ifndef TG_TRACE_H
#define TG_TRACE_H
#include "runtime/runtime.h"

/** Writes @p path: a header, then one row per record: id, kernel, worker, worker_name, submit,
 * start, end (seconds since recording started), predicted (seconds, NA when unknown), work,
 * preds (ids, comma-separated; - when none). */
tg_status tg_trace_tsv(const char *path, const tg_task_record *r, size_t n, tg_error *err);

/** Writes @p path, a PNG Gantt chart: one row per StarPU worker, one bar per task coloured by
 * kernel, a time axis in seconds since recording started, a legend (kernel, tasks, share of
 * the busy time) and @p title above. */
tg_status tg_trace_gantt(const char *path, const tg_task_record *r, size_t n, const char *title,
                         tg_error *err);
#endif
