/* parcel-cluster: EPIC's merging of small parcels with their nearest neighbour (nearest-
 * neighbour search, directed graph, two-stage pruning, merge), in parallel over the haloswap
 * remote access layer and as the serial reference algorithm. */
#ifndef PC_H
#define PC_H

#include "haloswap.h"
#include "haloswap_ra.h"

#include <stdint.h>

#define PC_PI 3.14159265358979323846

/* Attributes of a parcel, stored as doubles in this order (EPIC's file variables). */
enum { PX, PY, PZ, XI, ETA, ZETA, BUOY, VOL, B11, B12, B13, B22, B23, PC_NATTR };
extern const char *const pc_attr_names[PC_NATTR];

typedef struct {
  double a[PC_NATTR];
} pc_parcel;

typedef struct {
  int n, cap;
  pc_parcel *p;
} pc_set;

/* Box: periodic in x and y, walled in z. Cells are the search bins. */
typedef struct {
  int n[3];
  double origin[3], extent[3], dx[3];
} pc_box;

typedef struct {
  int nppc;              /* parcels per cell */
  double min_vratio;     /* vmin = vcell / min_vratio */
  double small_fraction; /* r in volume = max(vmin/4, vmin*U + (1-r)*vmin) */
  int shuffle;
  int variable_nppc;
  uint64_t seed;
} pc_setup;

/* Per-cycle timings (seconds) and counts on this rank. */
typedef struct {
  double search, graph, prune, merge, total;
  long nsmall, nmerged_links, nremote_links, sent_for_merge, handed_over;
  long unmerged_small;   /* small parcels that were neither merged nor a merge target */
  long chain_violations; /* merge targets that are themselves merged away */
  long stage1_rounds;
} pc_cycle_info;

/* Parallel context: 2-D decomposition in x and y (z whole) from haloswap. */
typedef struct {
  hs_decomp dec;
  MPI_Comm comm;
  int rank, size;
  int procs[2], coord[2], lo[2], nloc[2];
  int nbr[9];           /* rank in direction (dx, dy): index (dy+1)*3 + (dx+1); 4 = me */
  int ndistinct;        /* distinct neighbour ranks other than me */
  int distinct[8];
  int *offx, *offy;     /* first global cell of every coordinate, procs+1 entries */
} pc_par;

typedef struct {
  hs_ra ra;
  hs_ra_backend backend;
  hs_ra_rma_sync mode;
  int check;            /* count chain violations (extra remote gets) */
} pc_prune_ctx;

/* ---- common (pc_common.c) */
void pc_box_init(pc_box *b, const int n[3], const double origin[3], const double extent[3]);
double pc_vmin(const pc_box *b, double min_vratio);
/* Rank 0's verdict on every rank of comm: returns bad (rank 0's), with rank 0's msg in err. */
int pc_root_verdict(MPI_Comm comm, int bad, const char *msg, char *err, size_t len);
int pc_set_reserve(pc_set *s, int n);
int pc_set_push(pc_set *s, const pc_parcel *p);
void pc_set_free(pc_set *s);
int pc_cell_of(const pc_box *b, int axis, double x);
double pc_wrap(const pc_box *b, int axis, double x);
double pc_pdiff(const pc_box *b, int axis, double d); /* periodic difference in [-L/2, L/2) */
/* Parcels of the cells [c0, c1) x [d0, d1) x all z, generated per cell (decomposition-free). */
int pc_generate(const pc_box *b, const pc_setup *su, int c0, int c1, int d0, int d1, pc_set *out);
void pc_shuffle(pc_set *s, uint64_t seed);
/* Merge the members into the target (volume-weighted attributes, shape from second moments
 * rescaled to the merged volume). Members are ordered canonically first. */
void pc_merge_group(const pc_box *b, pc_parcel *target, const pc_parcel **members, int nm);
double pc_b33(const pc_parcel *p);
/* Checks one parcel; on failure writes the variable name and problem to var/why. */
int pc_check_parcel(const pc_box *b, const pc_parcel *p, const char **var, char *why, size_t len);
void pc_sort(pc_parcel *p, int n);

/* ---- serial reference (pc_serial.c) */
int pc_cycle_serial(const pc_box *b, double vmin, pc_set *s, pc_cycle_info *info);

/* ---- parallel (pc_parallel.c) */
int pc_par_init(MPI_Comm comm, const pc_box *b, pc_par *par);
void pc_par_free(pc_par *par);
int pc_owner(const pc_par *par, const pc_box *b, const pc_parcel *p);
int pc_prune_open(pc_par *par, pc_prune_ctx *ctx, const char *backend, int capacity);
void pc_prune_close(pc_prune_ctx *ctx);
int pc_cycle_parallel(pc_par *par, const pc_box *b, double vmin, pc_set *s, pc_prune_ctx *ctx,
                      pc_cycle_info *info);
/* Gather every rank's parcels to rank 0 (out valid on rank 0 only). */
int pc_gather(pc_par *par, const pc_set *s, pc_set *out);
/* Rank 0 holds `all`; every rank receives its own parcels (by position). */
int pc_scatter(pc_par *par, const pc_box *b, const pc_set *all, pc_set *mine);

/* ---- NetCDF (pc_netcdf.c) */
int pc_have_netcdf(void);
/* What a file says about the run that wrote it (parcel-cluster's own files record it). */
typedef struct {
  double min_vratio; /* NaN: not recorded */
} pc_file_info;
/* Collective: rank 0 reads and validates; every rank returns the same status and message.
 * info may be NULL. On failure *b, *all and *info are left as they were (all->n = 0). */
int pc_read_netcdf(MPI_Comm comm, const char *path, pc_box *b, pc_set *all, pc_file_info *info,
                   char *err, size_t len);

/* The run's parameters, recorded as global attributes parcel_cluster_* in written files. */
typedef struct {
  const pc_setup *su;
  const char *stage;   /* "initial" or "merged" */
  const char *input;   /* the file read, or NULL for an artificial set-up */
  const char *backend; /* back end that merged ("serial" for the reference) */
  int cycles, nranks;
  uint64_t seed;
} pc_run_info;
/* Rank 0 writes all parcels (gathered by the caller): EPIC's layout with CF attributes
 * (units, long_name), Conventions, version and creation time, and the run's parameters. */
int pc_write_netcdf(const char *path, const pc_box *b, const pc_set *all, int nwriters,
                    const pc_run_info *run, char *err, size_t len);

#endif
