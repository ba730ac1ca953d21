/* Helpers shared by the benchmarks (common.h). */
#define _GNU_SOURCE /* program_invocation_short_name */
#include "bench/common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void die(const char *what, const tg_error *err) {
    fprintf(stderr, "%s: %s%s%s\n", program_invocation_short_name, what ? what : "",
            what && err ? ": " : "", err ? err->msg : "");
    exit(1);
}

int in_list(const char *list, const char *name) {
    size_t len = strlen(name);
    for (const char *p = strstr(list, name); p; p = strstr(p + 1, name))
        if ((p == list || p[-1] == ',') && (!p[len] || p[len] == ',')) return 1;
    return 0;
}
