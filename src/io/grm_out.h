/* The GRM files' number format (grm_out.c), exposed for its test. */
#ifndef TG_IO_GRM_OUT_H
#define TG_IO_GRM_OUT_H

/** Writes @p x as printf's "%.6g" does (plink2's 6 significant digits) into @p buf (at least
 * 32 bytes), without a terminating NUL, and returns the length. 10-20× faster than snprintf:
 * the 6 digits come from one scaling by an exact power of ten; values whose scaled fraction lies
 * within 1e-7 of a half (where that scaling's rounding could decide), zeros, non-finite values
 * and magnitudes outside [1e-15, 1e15) go to snprintf. */
int tg_format_g6(double x, char *buf);
#endif
