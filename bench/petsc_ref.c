/* petsc: see petsc_ref.h. */
#include "petsc_ref.h"

#include <petscdmda.h>
#include <stdio.h>

struct petsc_ref {
  DM da;
  Vec g, l;
  int nf;
  int xs, ys, zs, xm, ym, zm;     /* owned (PETSc order: our z, y, x) */
  int gxs, gys, gzs, gxm, gym, gzm; /* with ghosts */
  int M, N, P;
  size_t bytes;
};

static int inited;

petsc_ref *petsc_ref_create(MPI_Comm cart, int nf, const int n[3], const int global[3],
                            int depth, int box, char *why, size_t len) {
  int procs[3], per[3], coord[3];
  MPI_Cart_get(cart, 3, procs, per, coord);
  if (procs[2] != 1 || !per[0] || !per[1]) {
    snprintf(why, len, "MONC's case: one rank in z, periodic x and y");
    return NULL;
  }
  if (!inited) {
    if (PetscInitializeNoArguments()) {
      snprintf(why, len, "PetscInitialize failed");
      return NULL;
    }
    inited = 1;
  }
  petsc_ref *r = calloc(1, sizeof *r);
  r->nf = nf;
  /* PETSc's x = our z (contiguous), PETSc's z = our x. */
  PetscErrorCode e = DMDACreate3d(cart, DM_BOUNDARY_NONE, DM_BOUNDARY_PERIODIC,
                                  DM_BOUNDARY_PERIODIC, box ? DMDA_STENCIL_BOX : DMDA_STENCIL_STAR,
                                  global[2], global[1], global[0], procs[2], procs[1], procs[0],
                                  nf, depth, NULL, NULL, NULL, &r->da);
  if (!e) e = DMSetUp(r->da);
  if (!e) e = DMCreateGlobalVector(r->da, &r->g);
  if (!e) e = DMCreateLocalVector(r->da, &r->l);
  if (e) {
    snprintf(why, len, "DMDA setup failed (PETSc error %d)", (int)e);
    free(r);
    return NULL;
  }
  PetscInt a[6];
  DMDAGetCorners(r->da, &a[0], &a[1], &a[2], &a[3], &a[4], &a[5]);
  r->xs = (int)a[0], r->ys = (int)a[1], r->zs = (int)a[2], r->xm = (int)a[3], r->ym = (int)a[4],
  r->zm = (int)a[5];
  DMDAGetGhostCorners(r->da, &a[0], &a[1], &a[2], &a[3], &a[4], &a[5]);
  r->gxs = (int)a[0], r->gys = (int)a[1], r->gzs = (int)a[2], r->gxm = (int)a[3],
  r->gym = (int)a[4], r->gzm = (int)a[5];
  r->M = global[2], r->N = global[1], r->P = global[0];
  if (r->xm != n[2] || r->ym != n[1] || r->zm != n[0]) {
    snprintf(why, len, "PETSc split the grid differently (%dx%dx%d per rank)", r->zm, r->ym, r->xm);
    petsc_ref_free(r);
    return NULL;
  }
  r->bytes = (size_t)r->gxm * r->gym * r->gzm * (size_t)nf * sizeof(PetscScalar);
  return r;
}

int petsc_ref_swap(petsc_ref *r) {
  if (DMGlobalToLocalBegin(r->da, r->g, INSERT_VALUES, r->l)) return 1;
  if (DMGlobalToLocalEnd(r->da, r->g, INSERT_VALUES, r->l)) return 1;
  return 0;
}

long petsc_ref_check(petsc_ref *r, double (*cell)(int f, int gx, int gy, int gz)) {
  PetscScalar ****g, ****l;
  long bad = 0;
  DMDAVecGetArrayDOF(r->da, r->g, &g);
  for (int k = r->zs; k < r->zs + r->zm; k++)
    for (int j = r->ys; j < r->ys + r->ym; j++)
      for (int i = r->xs; i < r->xs + r->xm; i++)
        for (int f = 0; f < r->nf; f++) g[k][j][i][f] = cell(f, k, j, i);
  DMDAVecRestoreArrayDOF(r->da, r->g, &g);
  if (petsc_ref_swap(r)) return -1;
  DMDAVecGetArrayDOF(r->da, r->l, &l);
  for (int k = r->gzs; k < r->gzs + r->gzm; k++)
    for (int j = r->gys; j < r->gys + r->gym; j++)
      for (int i = r->gxs; i < r->gxs + r->gxm; i++)
        for (int f = 0; f < r->nf; f++) {
          int kk = (k + r->P) % r->P, jj = (j + r->N) % r->N;
          if (l[k][j][i][f] != cell(f, kk, jj, i)) bad++;
        }
  DMDAVecRestoreArrayDOF(r->da, r->l, &l);
  return bad;
}

size_t petsc_ref_bytes(const petsc_ref *r) { return r->bytes; }

void petsc_ref_free(petsc_ref *r) {
  if (!r) return;
  if (r->g) VecDestroy(&r->g);
  if (r->l) VecDestroy(&r->l);
  if (r->da) DMDestroy(&r->da);
  free(r);
}

void petsc_ref_finalize(void) {
  if (inited) PetscFinalize();
  inited = 0;
}
