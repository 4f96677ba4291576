/* petsc: the same halo swap with PETSc's DMDA and DMGlobalToLocal (built only where CMake
 * finds PETSc for this MPI library). One DMDA with dof = number of fields (PETSc's own
 * layout for many fields on one grid: interleaved), box stencil of width depth, periodic x
 * and y, no ghosts in z. Our z-fast (z, y, x) grid is PETSc's (x, y, z): PETSc's x is our z. */
#ifndef HS_BENCH_PETSC_REF_H
#define HS_BENCH_PETSC_REF_H

#include <mpi.h>
#include <stddef.h>

typedef struct petsc_ref petsc_ref;

/* NULL and the reason in why when it cannot be set up. cart: 3-D Cartesian communicator. */
petsc_ref *petsc_ref_create(MPI_Comm cart, int nf, const int n[3], const int global[3],
                            int depth, int box, char *why, size_t len);
/* One DMGlobalToLocal of every field. */
int petsc_ref_swap(petsc_ref *r);
/* Wrong ghost values after a swap of the analytic pattern (0: correct). */
long petsc_ref_check(petsc_ref *r, double (*cell)(int f, int gx, int gy, int gz));
size_t petsc_ref_bytes(const petsc_ref *r);
void petsc_ref_free(petsc_ref *r);
void petsc_ref_finalize(void);

#endif
