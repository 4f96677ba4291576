/* What a meta-transport (auto) uses besides the contract: the registry's lookups, nested
 * plans, the list splitter, failure adoption, two questions about the plan (sweep, region
 * set) and the analytic halo check, its self-check. */
#ifndef HS_META_H
#define HS_META_H

#include "hs_transport.h"

/* ---- registry (src/plan/registry.c) */
/* The built transport of that name, or NULL. */
const hs_transport_ops *hs__transport_find(const char *name);
/* "a, b, c": the names of every built transport. */
void hs__transport_list(char *buf, size_t len);
/* Why a known transport called `name` is not in this build, or NULL (built, or unknown). */
const char *hs__transport_unbuilt(const char *name);


/* ---- options (src/plan/options.c) */
/* Length of the next item of a list whose items are separated by any of seps; separators
 * inside [...] do not count. The one list splitter (options, auto's candidates). */
size_t hs__list_item(const char *s, const char *seps);

/* ---- errors during a swap (src/plan/fail.c) */
/* Take the failure of the plan `from` (a delegating or staged plan's, for the plan it runs). */
void hs__fail_adopt(hs_plan p, const hs_plan from);
/* The plan sweeps (HS_ORDER_SWEEP; src/geometry/order.c); it has a region set (regions.c). */
bool hs__plan_sweeps(const hs_plan p);
bool hs__plan_has_regions(const hs_plan p);

/* ---- plans (src/plan/plan.c) */
/* A plan nested in p, the one way to make one (auto's candidates, a staged plan's stages):
 * p's geometry (depths, stencil, the fields as the caller described them, and unless it is a
 * stage the one-way direction and the combine order), transport `spec` with the options it
 * carries, or (spec NULL) p's transport with p's options as parsed, less the core's.
 * $HALOSWAP_OPTIONS, meant for the outer plan, is not applied again. stage: a stage of a
 * staged exchange (src/decorators/staged.c), or NULL. Collective. */
typedef struct {
  int axis;      /* the stage's axis: its geometry holds the faces of this axis only */
  unsigned wide; /* bit a: axis a was exchanged by an earlier stage (sections widened) */
  bool full;     /* a sweep's stage: sections span the whole swapped halo of other axes */
  int first, nfields; /* the fields of p it swaps (core option stage_fields); nfields 0: all */
} hs_stage;
int hs__plan_nest(hs_plan p, const char *spec, const hs_stage *stage, hs_plan *out);
/* The plan has edges or corners to carry between two or more exchanged axes (else a staged
 * plan runs its transport directly). */
bool hs__staged_useful(const hs_plan p);


/* ---- geometry (src/geometry/geometry.c) */
/* Global index of local index i on axis a of field f (wrapped on periodic axes). */
int hs__field_global_index(const hs_plan p, int f, int axis, int i);

/* ---- auto's self-check, the analytic halo check (src/transports/auto/selfcheck.c): how a
 * measuring transport validates a candidate */
/* Fill every field with a value computed from its global coordinates (halos: a sentinel),
 * saving the fields' contents first into a buffer the caller frees with hs__selfcheck_end. */
typedef struct hs_selfcheck hs_selfcheck;
int hs__selfcheck_begin(hs_plan p, hs_selfcheck **out);
/* HS_OK if every halo cell the plan writes holds the value of the cell it mirrors; else
 * HS_ERR_INTERNAL with the first wrong cell in the message. Local. */
int hs__selfcheck_compare(hs_plan p, hs_selfcheck *o);
/* Ready for the next candidate: the sentinel back in every halo cell the plan writes (full
 * = 0: a swap writes nothing else), or the whole pattern again (full = 1: after a candidate
 * that failed, which may have written anywhere). */
void hs__selfcheck_reset(hs_plan p, hs_selfcheck *o, int full);
/* Put the fields' saved contents back and free o. */
void hs__selfcheck_end(hs_plan p, hs_selfcheck *o);
#endif
