/* monc-ref: the halo swap a MONC user has today, written the way MONC's
 * model_core/src/communication/halocommunication.F90 does it (docs/benchmarks.md):
 * per distinct neighbour one face message and one corner message (tag 0, receives posted
 * first: face then corner), buffers packed field by field in MONC's page order (dimension Y
 * then X, slot 1..2*depth, then the fields; corners 1..4 sent, 4..1 received), local copies
 * for a periodic self-neighbour, then Waitall on the receives, unpack, Waitall on the sends.
 * Difference from MONC: corner messages carry only the pages MONC fills (MONC sends twice
 * that, half unused), so monc-ref is if anything faster than MONC itself. */
#ifndef HS_BENCH_MONC_REF_H
#define HS_BENCH_MONC_REF_H

#include <mpi.h>
#include <stddef.h>

typedef struct monc_ref monc_ref;

/* Fields: nf arrays in z-fast layout (z contiguous, then y, then x), interior n[3], halo
 * h[3] (h[2] must be 0: MONC has no z halo). cart: a 3-D Cartesian communicator with one
 * rank in z and periodic x and y. NULL and the reason in why when the case is not MONC's. */
monc_ref *monc_ref_create(MPI_Comm cart, int nf, void *const *data, size_t elem, const int n[3],
                          const int h[3], int depth, int corners, char *why, size_t len);
void monc_ref_swap(monc_ref *m);
size_t monc_ref_buffer_bytes(const monc_ref *m);
void monc_ref_free(monc_ref *m);

#endif
