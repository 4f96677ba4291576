/* C side of the Fortran module: scalar/array arguments only, so the Fortran interfaces need no
 * mirror of the C structs. Field halos are derived from the Fortran array shapes. */
#include "hs_core.h"

#include <stdlib.h>
#include <string.h>

/* placed: node-aware placement (haloswap_decomposition_create's node_size argument). */
static int decomp_create(MPI_Fint fcomm, int ndims, const int *global, const int *procs,
                         const int *periodic, int placed, int node_size, hs_decomp *out) {
  hs_decomp_desc desc;
  hs__decomp_desc_axes(&desc, ndims, global, procs, periodic, 0);
  if (placed) {
    desc.placement = HS_PLACE_NODE;
    desc.node_size = node_size;
  }
  return hs_decomp_create(MPI_Comm_f2c(fcomm), &desc, out);
}

int hs_f_decomp_create(MPI_Fint fcomm, int ndims, const int *global, const int *procs,
                       const int *periodic, hs_decomp *out) {
  return decomp_create(fcomm, ndims, global, procs, periodic, 0, 0, out);
}

int hs_f_decomp_create_placed(MPI_Fint fcomm, int ndims, const int *global, const int *procs,
                              const int *periodic, int node_size, hs_decomp *out) {
  return decomp_create(fcomm, ndims, global, procs, periodic, 1, node_size, out);
}

int hs_f_decomp_free(hs_decomp *d) { return hs_decomp_free(d); }
/* haloswap_local_extent (what 0), haloswap_global_offset (1), haloswap_procs (2),
 * haloswap_coord (3) along axis. */
int hs_f_decomp_axis(hs_decomp d, int what, int axis) {
  switch (what) {
  case 0: return hs_decomp_local_extent(d, axis);
  case 1: return hs_decomp_global_offset(d, axis);
  case 2: return hs_decomp_procs(d, axis);
  default: return hs_decomp_coord(d, axis);
  }
}
int hs_f_ndims(hs_decomp d) { return hs_decomp_ndims(d); }

/* shapes: 3 allocated extents per field in axis order x, y, z. */
/* order_offsets(orows, norder), sweep_axes(nsweep): norder / nsweep -1 when absent
 * (hs__f_plan_finish). */
int hs_f_plan_create(hs_decomp d, int nfields, const int *types, void *const *datas,
                     const int *shapes, const int *depth, int stencil, int oneway, int axis,
                     const char *transport, int orows, int norder, const int *offsets,
                     int nsweep, const int *axes, hs_plan *out) {
  *out = NULL;
  if (!d) return hs__error(HS_ERR_ARG, "init_halo_communication: decomposition not created");
  int rc = HS_OK;
  hs_field *fields = calloc((size_t)(nfields > 0 ? nfields : 1), sizeof *fields);
  if (!fields) rc = hs__error(HS_ERR_NOMEM, "init_halo_communication: out of memory");
  for (int f = 0; f < nfields && rc == HS_OK; f++) {
    if (types[f] == -2) {
      rc = hs__error(HS_ERR_ARG,
                     "init_halo_communication: fields(%d) is not contiguous; haloswap_field "
                     "needs the whole array (no section or strided pointer)",
                     f + 1);
      break;
    }
    fields[f] = hs_field_array((hs_type)types[f], datas[f], HS_LAYOUT_ZFAST, 0);
    for (int a = 0; a < d->ndims && rc == HS_OK; a++) {
      int extra = shapes[3 * f + a] - d->local[a];
      if (extra < 0 || extra % 2)
        rc = hs__error(HS_ERR_ARG,
                       "init_halo_communication: fields(%d) has extent %d on axis %d but the "
                       "local interior is %d: the extent must be interior + 2*halo",
                       f + 1, shapes[3 * f + a], a + 1, d->local[a]);
      fields[f].halo[a] = extra / 2;
    }
  }
  hs_plan_desc pd;
  hs_plan_desc_init(&pd);
  for (int a = 0; a < HS_MAX_DIMS; a++) pd.depth[a] = depth[a];
  pd.stencil = (hs_stencil)stencil;
  pd.oneway = (hs_oneway)oneway;
  pd.oneway_axis = axis;
  return hs__f_plan_finish(d, "init_halo_communication", rc, &pd, fields, nfields, transport,
                           orows, norder, offsets, nsweep, axes, out);
}

/* A one-field plan whose data only its pack/unpack hooks touch (the MONC drop-in's policy
 * callbacks): Fortran bind(c) procedures (ctx, region, buf) that read the region through
 * hs_f_region, so no Fortran type mirrors hs_field, hs_plan_desc or hs_region. halo, depth:
 * per axis x, y, z; the transport comes from HALOSWAP_TRANSPORT (as HS_TRANSPORT_DEFAULT). */
int hs_f_plan_create_hooks(hs_decomp d, int type, const int *halo, const int *depth, int stencil,
                           hs_pack_fn pack, hs_unpack_fn unpack, void *ctx, hs_plan *out) {
  *out = NULL;
  if (!d) return hs__error(HS_ERR_ARG, "haloswap_hooks_init: decomposition not created");
  hs_field field = hs_field_array((hs_type)type, NULL, HS_LAYOUT_ZFAST, 0);
  field.pack = pack;
  field.unpack = unpack;
  field.ctx = ctx;
  hs_plan_desc pd;
  hs_plan_desc_init(&pd);
  for (int a = 0; a < HS_MAX_DIMS; a++) {
    field.halo[a] = halo[a];
    pd.depth[a] = depth[a];
  }
  pd.stencil = (hs_stencil)stencil;
  pd.nfields = 1;
  pd.fields = &field;
  return hs_plan_create(d, &pd, out);
}

/* The box a hook is called for: its field (1-based), first local index and extent per axis. */
void hs_f_region(const hs_region *r, int *field, int *lo, int *count) {
  *field = r->field + 1;
  for (int a = 0; a < HS_MAX_DIMS; a++) {
    lo[a] = r->lo[a];
    count[a] = r->count[a];
  }
}

int hs_f_swap_start(hs_plan p, void *const *arrays) { return hs_swap_start(p, arrays); }
int hs_f_swap_complete(hs_plan p, void *const *arrays) { return hs_swap_complete(p, arrays); }
int hs_f_plan_free(hs_plan *p) { return hs_plan_free(p); }
int hs_f_plan_nfields(hs_plan p) { return p ? p->nfields : 0; }

int hs_f_stats(hs_plan p, double *swaps, double *t_start, double *t_complete, double *bytes) {
  hs_plan_stats st;
  int rc = hs_plan_get_stats(p, &st);
  if (rc != HS_OK) return rc;
  *swaps = (double)st.swaps;
  *t_start = st.seconds_start;
  *t_complete = st.seconds_complete;
  *bytes = (double)st.bytes_allocated;
  return HS_OK;
}

/* Copies the last error message into buf (NUL-padded); returns its length. */
int hs_f_error_message(char *buf, int len) {
  const char *m = hs_error_message();
  int n = (int)strlen(m);
  if (n > len) n = len;
  memset(buf, ' ', (size_t)len);
  memcpy(buf, m, (size_t)n);
  return n;
}

const char *hs_f_transport(hs_plan p) { return hs_plan_transport(p); }

/* The Fortran side found source_data of the wrong length. */
int hs_f_error_source_data(int given, int want) {
  return hs__error(HS_ERR_ARG, "source_data has %d fields but the plan has %d", given, want);
}

int hs_f_alloc(hs_decomp d, long long bytes, void **ptr) {
  if (bytes < 0) return hs__error(HS_ERR_ARG, "haloswap_allocate: size %lld is negative", bytes);
  return hs_alloc(d, (size_t)bytes, ptr);
}
int hs_f_free(hs_decomp d, void *ptr) { return hs_free(d, ptr); }
int hs_f_transport_count(void) { return hs_transport_count(); }
const char *hs_f_transport_name(int i) { return hs_transport_name(i); }

/* An error found on the Fortran side (per-swap array checks): msg is not NUL-terminated. */
int hs_f_set_error(int code, const char *msg, int len) {
  return hs__error(code, "%.*s", len > 0 ? len : 0, msg);
}

/* The Fortran side found a mistake (already in hs_error_message) where a swap begins: every
 * neighbour learns of it in this swap (docs/design.md, "Errors during a swap"). */
int hs_f_swap_fail(hs_plan p, int code) {
  if (!p) return code;
  return hs__round_fail_here(p, code, false, true); /* source_data: per-swap arrays */
}

/* ... or while a swap is in progress: the plan fails; the swap completes as started. */
int hs_f_fail_mark(hs_plan p, int code) {
  if (!p) return code;
  return hs__fail_record(p, code);
}


/* For the MONC drop-in: 1 if the plan runs the staged exchange (core option staged=1), whose
 * stage boxes its callbacks cannot take. */
int hs_f_plan_staged(hs_plan p) { return p && (hs__plan_staged(p) || p->core->config.staged); }

/* Calls fn once, at the start of MPI_Finalize (the delete callback of an attribute on
 * MPI_COMM_SELF): a drop-in prints the statistics of the halo states never finalised, or frees
 * its plans there. Registering fn again changes nothing; up to 8 functions, in order. */
enum { HS_F_FINI_MAX = 8 };
static void (*hs_f_fini_fn[HS_F_FINI_MAX])(void);
static int hs_f_fini_n;
static int hs_f_fini_cb(MPI_Comm c, int key, void *val, void *extra) {
  (void)c, (void)key, (void)val, (void)extra;
  for (int i = 0; i < hs_f_fini_n; i++) hs_f_fini_fn[i]();
  hs_f_fini_n = 0;
  return MPI_SUCCESS;
}
int hs_f_at_finalize(void (*fn)(void)) {
  static int key = MPI_KEYVAL_INVALID;
  int known = 0;
  for (int i = 0; i < hs_f_fini_n; i++) known |= hs_f_fini_fn[i] == fn;
  if (!known) {
    if (hs_f_fini_n == HS_F_FINI_MAX)
      return hs__error(HS_ERR_ARG, "more than %d functions to call at MPI_Finalize",
                       HS_F_FINI_MAX);
    hs_f_fini_fn[hs_f_fini_n++] = fn;
  }
  if (key != MPI_KEYVAL_INVALID) return HS_OK;
  if (MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, hs_f_fini_cb, &key, NULL) != MPI_SUCCESS ||
      MPI_Comm_set_attr(MPI_COMM_SELF, key, NULL) != MPI_SUCCESS)
    return hs__error(HS_ERR_MPI, "could not register the statistics printed at MPI_Finalize");
  return HS_OK;
}
