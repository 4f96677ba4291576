/* epic-fields: EPIC's parcel-to-grid and grid-to-parcel steps on EPIC's own field layout
 * (docs/mini-apps.md, "epic-fields"). Fields are (z,y,x) in Fortran terms, C [x][y][z] with z
 * contiguous; x and y are split over ranks and periodic with a halo of 1 point below and 2
 * above; z holds the nodes 0..nz plus one halo level on each side (-1 and nz+1), never split.
 * The same kernels run on a rank's block (halos filled by exchanges) and, for the serial
 * reference, on the whole grid with the periodic wrap done by index arithmetic. */
#ifndef EF_H
#define EF_H

#include "pc.h"

#include <stddef.h>
#include <stdint.h>

#define EF_HLO 1 /* EPIC: hlo = lo - 1 */
#define EF_HHI 2 /* EPIC: hhi = hi + 2 */

/* Illustrative moist-physics constants (EPIC reads its own from the run's set-up). */
#define EF_Q0 0.015      /* saturation humidity at the ground */
#define EF_LAMBDA_C 0.5  /* inverse saturation height scale */
#define EF_GLAT 2.0      /* latent heating -> buoyancy */
#define EF_DT 0.1        /* time step of the surface fluxes */

/* Per-parcel outputs of grid2par and the surface fluxes. */
enum {
  EF_DPOS = 0,     /* velocity at the parcel (3): EPIC's delta_pos */
  EF_STRAIN = 3,   /* velocity gradient (8): EPIC's strain */
  EF_DVOR = 11,    /* vorticity tendency (3): EPIC's delta_vor */
  EF_DBUOY = 14,   /* surface buoyancy flux increment */
  EF_DHUM = 15,    /* surface humidity flux increment */
  EF_NOUT = 16
};

/* The par2grid fields (the batched reverse + fill), float ones first. */
enum { EF_VOLG, EF_VORTX, EF_VORTY, EF_VORTZ, EF_TBUOYG, EF_DBUOYG, EF_HUMG, EF_NFLOAT };

typedef struct {
  pc_box b;
  double dxi[3];
  double vmin;   /* small parcels: volume <= vmin */
  double zdepth; /* surface fluxes act below this height */
} ef_box;

/* One rank's fields (or the whole grid for the serial reference). */
typedef struct {
  int nx, ny, nz;   /* interior points in x and y; z cells (nodes 0..nz) */
  int hlo, hhi;     /* halo below / above in x and y (0 and 0 with wrap) */
  int ox, oy;       /* global index of local point 0 */
  int gnx, gny;     /* global points in x and y */
  int wrap;         /* serial reference: global index modulo gnx / gny */
  int X, Y, Z;      /* allocated extents: nx + hlo + hhi, ny + hlo + hhi, nz + 3 */
  size_t n, n2;     /* points of a 3-D (X*Y*Z) and a 2-D (X*Y) array */
  /* par2grid: EPIC's volg, vortg(3), tbuoyg, dbuoyg, humg, nparg, nsparg */
  double *volg, *vortg, *tbuoyg, *dbuoyg, *humg;
  int32_t *nparg, *nsparg;
  /* grid2par: velog(3), velgradg(8), vtend(3); surface: binc, hinc */
  double *velog, *velgradg, *vtend;
  double *binc, *hinc;
  int shared; /* arrays from hs_alloc */
} ef_grid;

/* Local parcels: attributes, a decomposition-free key, the 4 support points (EPIC's
 * get_points, computed once: the parcels do not move in this mini-app) and the outputs. */
typedef struct {
  int n;
  pc_parcel *p;
  uint64_t *key;
  double *pts; /* 12 per parcel */
  double *out; /* EF_NOUT per parcel */
} ef_parcels;

static inline double *ef_float_field(const ef_grid *g, int f) {
  switch (f) {
  case EF_VOLG: return g->volg;
  case EF_VORTX: return g->vortg;
  case EF_VORTY: return g->vortg + g->n;
  case EF_VORTZ: return g->vortg + 2 * g->n;
  case EF_TBUOYG: return g->tbuoyg;
  case EF_DBUOYG: return g->dbuoyg;
  default: return g->humg;
  }
}

/* Element of local point (i, j, k); i, j in [-hlo, n + hhi), k in [-1, nz + 1]. */
static inline size_t ef_at(const ef_grid *g, int i, int j, int k) {
  return ((size_t)(i + g->hlo) * (size_t)g->Y + (size_t)(j + g->hlo)) * (size_t)g->Z +
         (size_t)(k + 1);
}
static inline size_t ef_at2(const ef_grid *g, int i, int j) {
  return (size_t)(i + g->hlo) * (size_t)g->Y + (size_t)(j + g->hlo);
}

/* ---- ef_kernels.c */
void ef_box_init(ef_box *e, const pc_box *b, double min_vratio);
/* The 4 support points of an ellipsoid (EPIC's get_points, with its own eigen solver). */
void ef_support_points(const pc_parcel *p, double pts[12]);
double ef_humidity(const pc_parcel *p);
/* Allocates the fields; hs_alloc'd (collective) when d is given and shared is set. */
int ef_grid_alloc(ef_grid *g, hs_decomp d, int shared);
void ef_grid_free(ef_grid *g, hs_decomp d);
/* Reproducible deposit (docs/mini-apps.md, "Reproducible deposits"): bounds over a rank's
 * parcels, maxima only so that their global reduction is exact: per float field the largest
 * possible |contribution|; the most parcels in one cell; with apriori (a pass over the
 * support points), per axis how many cells a support point lies below / above its parcel's
 * cell; per field the largest |value| (volume: 1); the volume estimate, max over cells of
 * parcels x largest parcel volume. nparg and volg serve as scratch (the deposit rebuilds
 * them). Returns -1 (why) for a parcel not in this rank's cells. */
enum {
  EF_BD_CELL = EF_NFLOAT,
  EF_BD_BELOW,
  EF_BD_ABOVE = EF_BD_BELOW + 3,
  EF_BD_VAL = EF_BD_ABOVE + 3,
  EF_BD_VEST = EF_BD_VAL + EF_NFLOAT,
  EF_NBOUND
};
int ef_deposit_bounds(ef_grid *g, const ef_box *e, const ef_parcels *ps, int apriori,
                      double bd[EF_NBOUND], char *why, size_t len);
/* From the global bounds, per field the power of two q to round contributions to (0: no
 * nonzero contribution). apriori: from the a priori bound on the contributions per node
 * (*kmax) and the largest contribution, always exact; else from the volume estimate, which
 * ef_quanta_hold must confirm after the exchange. -1 if a field leaves no such power of two. */
int ef_quanta(const double bd[EF_NBOUND], int apriori, double q[EF_NFLOAT], double *kmax);
/* After the exchange, from the largest volg anywhere (before the z folding): whether every
 * node's sum was exact with the estimated q. */
int ef_quanta_hold(const double bd[EF_NBOUND], const double q[EF_NFLOAT], double max_volg);
double ef_max_volg(const ef_grid *g);
/* Deposits every parcel, each contribution to float field f rounded to a multiple of q[f]
 * (q NULL: plain sums; absval: unrounded |contribution|, for the summed-magnitude figure).
 * Returns -1 and describes the parcel in why when a support point falls outside the halo. */
int ef_par2grid_deposit(ef_grid *g, const ef_box *e, const ef_parcels *ps, int absval,
                        const double *q, char *why, size_t len);
/* After the exchange: EPIC's free-slip folding of the z halo, division by the volume,
 * extrapolation of the z halo (absval: the same on a bound, extrapolation 2|a| + |b|). */
void ef_par2grid_finish(ef_grid *g, int absval);
/* grid2par inputs at time t from analytic functions of global coordinates on the interior
 * columns; halo columns are set to NaN (they must come from the exchange). */
void ef_fill_analytic(ef_grid *g, const ef_box *e, double t);
int ef_grid2par(const ef_grid *g, const ef_box *e, ef_parcels *ps, char *why, size_t len);

/* ---- ef_ref.c: the exchange written the way EPIC's field_mpi.f90 does it */
typedef struct {
  void *data;  /* array with the grid's halo */
  int is_int;  /* int32 (sent through a double buffer, as EPIC) */
  int twod;    /* a 2-D (y,x) surface field */
} ef_arr;

typedef struct {
  MPI_Comm comm;
  int nbr[8]; /* ranks in EPIC's neighbour order N, S, W, E, NW, NE, SW, SE */
  const ef_grid *g;
} ef_ref;

void ef_ref_init(ef_ref *r, hs_decomp d, const ef_grid *g);
/* One call: buffers allocated, MPI_Irecv from the 8 neighbours, blocking MPI_Send to the 8,
 * MPI_Waitall, unpack, buffers freed. reverse = 1: halo -> owner, summed (EPIC's
 * halo_to_interior_communication); 0: interior -> halo (interior_to_halo_communication). */
int ef_ref_exchange(const ef_ref *r, const ef_arr *a, int narr, int reverse);

#endif
