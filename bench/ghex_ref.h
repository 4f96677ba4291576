/* ghex: the same halo swap with GHEX's structured regular API (C++, bench/ghex/ghex_ref.cpp),
 * built where bench/ghex/build.sh could build GHEX for this MPI library (make bench does).
 * It swaps hs_bench's own fields in place: every field one GHEX field descriptor over the
 * same memory (z-fast, halo h), one pattern with the swap depth per side, one
 * communication object; a swap is co.exchange(all fields).wait(). GHEX's regular halos
 * include edges and corners: the box stencil only. */
#ifndef HS_BENCH_GHEX_REF_H
#define HS_BENCH_GHEX_REF_H

#include <mpi.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ghex_ref ghex_ref;

/* NULL and the reason in why when it cannot be set up. type: 0 float64, 1 float32, 2 int32,
 * 3 int64 (hs_type); n: local interior, h: allocated halo, off: global index of interior 0,
 * global: global extents, depth: swapped cells per side, all per axis (x, y, z). */
ghex_ref *ghex_ref_create(MPI_Comm cart, int type, int nf, void **data, const int n[3],
                          const int h[3], const int off[3], const int global[3],
                          const int periodic[3], const int depth[3], char *why, size_t len);
/* One exchange of every field (blocking). 0 on success. */
int ghex_ref_swap(ghex_ref *r);
void ghex_ref_free(ghex_ref *r);
/* GHEX's version, e.g. "0.9.0". */
const char *ghex_ref_version(void);

#ifdef __cplusplus
}
#endif
#endif
