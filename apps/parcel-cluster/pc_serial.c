/* parcel-cluster: the serial reference algorithm (EPIC's serial merge, JCP-X 2022 app. D).
 * One process holds every parcel: bins over the whole periodic box, searches the 2x2x2 cells
 * around the nearest grid point with periodic wrap, prunes the graph in loop order (isolated
 * dual links go to whichever parcel comes first) and merges. No decomposition, no messages. */
#include "pc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int pc_cycle_serial(const pc_box *b, double vmin, pc_set *s, pc_cycle_info *info) {
  memset(info, 0, sizeof *info);
  double t0 = MPI_Wtime();
  const int n = s->n, nx = b->n[0], ny = b->n[1], nz = b->n[2];
  const long ncell = (long)nx * ny * nz;
  int *cnt = calloc((size_t)ncell + 1, sizeof(int)), *node = malloc((size_t)(n ? n : 1) * sizeof(int));
  int *cell = malloc((size_t)(n ? n : 1) * sizeof(int)), *isma = malloc((size_t)(n ? n : 1) * sizeof(int));
  if (!cnt || !node || !cell || !isma) return -1;
  for (int i = 0; i < n; i++) {
    const double *a = s->p[i].a;
    cell[i] = pc_cell_of(b, 0, a[PX]) + nx * (pc_cell_of(b, 1, a[PY]) + ny * pc_cell_of(b, 2, a[PZ]));
    cnt[cell[i] + 1]++;
  }
  for (long c = 0; c < ncell; c++) cnt[c + 1] += cnt[c];
  {
    int *fill = malloc((size_t)ncell * sizeof(int));
    if (!fill) return -1;
    memcpy(fill, cnt, (size_t)ncell * sizeof(int));
    for (int i = 0; i < n; i++) node[fill[cell[i]]++] = i;
    free(fill);
  }
  int nsma = 0;
  for (int i = 0; i < n; i++)
    if (s->p[i].a[VOL] < vmin) isma[nsma++] = i;
  info->nsmall = nsma;
  int *iclo = malloc((size_t)(nsma ? nsma : 1) * sizeof(int));
  if (!iclo) return -1;
  const double L[3] = {b->extent[0], b->extent[1], b->extent[2]};
  for (int m = 0; m < nsma; m++) {
    int i = isma[m];
    const double *p = s->p[i].a;
    int g[3];
    for (int k = 0; k < 3; k++) g[k] = (int)lround((p[PX + k] - b->origin[k]) / b->dx[k]);
    double best = L[0] * L[0] + L[1] * L[1] + L[2] * L[2];
    int bk = -1;
    int z0 = g[2] - 1 < 0 ? 0 : g[2] - 1, z1 = g[2] > nz - 1 ? nz - 1 : g[2];
    for (int iz = z0; iz <= z1; iz++)
      for (int iy = g[1] - 1; iy <= g[1]; iy++) {
        int jy = (iy % ny + ny) % ny;
        double shy = iy < 0 ? -L[1] : (iy >= ny ? L[1] : 0.0);
        for (int ix = g[0] - 1; ix <= g[0]; ix++) {
          int jx = (ix % nx + nx) % nx;
          double shx = ix < 0 ? -L[0] : (ix >= nx ? L[0] : 0.0);
          long c = jx + (long)nx * (jy + (long)ny * iz);
          for (int k = cnt[c]; k < cnt[c + 1]; k++) {
            int j = node[k];
            if (j == i) continue;
            const double *q = s->p[j].a;
            double dz = q[PZ] - p[PZ];
            if (dz * dz >= best) continue;
            double dx = q[PX] + shx - p[PX], dy = q[PY] + shy - p[PY];
            double d = dx * dx + dy * dy + dz * dz;
            if (d < best) {
              best = d;
              bk = j;
            }
          }
        }
      }
    if (bk < 0) return -2;
    iclo[m] = bk;
  }
  double t1 = MPI_Wtime();
  info->search = t1 - t0;

  /* Pruning (Algorithm 1, serial). */
  char *leaf = calloc((size_t)(n ? n : 1), 1), *av = calloc((size_t)(n ? n : 1), 1);
  char *mg = calloc((size_t)(n ? n : 1), 1);
  if (!leaf || !av || !mg) return -1;
  int cont;
  do {
    cont = 0;
    for (int m = 0; m < nsma; m++)
      if (!mg[isma[m]]) {
        leaf[isma[m]] = 1;
        av[iclo[m]] = 1;
      }
    for (int m = 0; m < nsma; m++)
      if (!mg[isma[m]]) leaf[iclo[m]] = 0;
    for (int m = 0; m < nsma; m++)
      if (!mg[isma[m]] && !leaf[isma[m]]) av[iclo[m]] = 0;
    for (int m = 0; m < nsma; m++) {
      int is = isma[m], ic = iclo[m];
      if (!mg[is] && leaf[is] && av[ic]) {
        cont = 1;
        mg[is] = 1;
        mg[ic] = 1;
      }
    }
    info->stage1_rounds++;
  } while (cont);
  for (int m = 0; m < nsma; m++)
    if (!mg[isma[m]] && leaf[isma[m]]) av[iclo[m]] = 1;
  int nmerge = 0;
  for (int m = 0; m < nsma; m++) {
    int is = isma[m], ic = iclo[m], merge = 0;
    if (mg[is] && leaf[is]) {
      merge = 1;
      if (leaf[ic]) info->chain_violations++;
    } else if (!mg[is]) {
      if (leaf[is])
        merge = 1;
      else if (!av[is]) {
        if (av[ic])
          merge = 1;
        else
          av[is] = 1; /* isolated dual link: the first in loop order receives */
      }
    }
    if (merge) {
      isma[nmerge] = is;
      iclo[nmerge] = ic;
      nmerge++;
    }
  }
  double t2 = MPI_Wtime();
  info->prune = t2 - t1;
  info->nmerged_links = nmerge;

  /* Merge: group the sources by target. */
  int *tcnt = calloc((size_t)n + 1, sizeof(int)), *mem = malloc((size_t)(nmerge ? nmerge : 1) * sizeof(int));
  const pc_parcel **ptr = malloc((size_t)(nmerge ? nmerge : 1) * sizeof *ptr);
  char *gone = calloc((size_t)(n ? n : 1), 1);
  if (!tcnt || !mem || !ptr || !gone) return -1;
  for (int k = 0; k < nmerge; k++) tcnt[iclo[k] + 1]++;
  for (int i = 0; i < n; i++) tcnt[i + 1] += tcnt[i];
  {
    int *fill = malloc((size_t)(n ? n : 1) * sizeof(int));
    if (!fill) return -1;
    memcpy(fill, tcnt, (size_t)n * sizeof(int));
    for (int k = 0; k < nmerge; k++) mem[fill[iclo[k]]++] = isma[k];
    free(fill);
  }
  for (int k = 0; k < nmerge; k++) gone[isma[k]] = 1;
  /* Copies of the sources: a target is never a source, but keep the inputs untouched anyway. */
  pc_parcel *src = malloc((size_t)(nmerge ? nmerge : 1) * sizeof *src);
  if (!src) return -1;
  for (int k = 0; k < nmerge; k++) src[k] = s->p[mem[k]];
  for (int i = 0; i < n; i++) {
    int nm = tcnt[i + 1] - tcnt[i];
    if (!nm) continue;
    if (gone[i]) info->chain_violations++;
    for (int k = 0; k < nm; k++) ptr[k] = &src[tcnt[i] + k];
    pc_merge_group(b, &s->p[i], ptr, nm);
  }
  for (int i = 0; i < n; i++)
    if (s->p[i].a[VOL] < vmin && !gone[i] && tcnt[i + 1] == tcnt[i]) info->unmerged_small++;
  int w = 0;
  for (int i = 0; i < n; i++)
    if (!gone[i]) s->p[w++] = s->p[i];
  s->n = w;
  info->merge = MPI_Wtime() - t2;
  info->total = MPI_Wtime() - t0;
  free(cnt);
  free(node);
  free(cell);
  free(isma);
  free(iclo);
  free(leaf);
  free(av);
  free(mg);
  free(tcnt);
  free(mem);
  free(ptr);
  free(gone);
  free(src);
  return 0;
}
