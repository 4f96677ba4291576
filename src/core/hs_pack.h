/* The packing engine and the datatype cache: copy programs between fields and buffers, and
 * derived datatypes over the same sections (opt-in for transports that move bytes themselves). */
#ifndef HS_PACK_H
#define HS_PACK_H

#include "hs_transport.h"

/* ---- packing engine (src/geometry/pack.c) */
void hs__pack_section(const hs_plan p, const hs_section *s, const char *field, char *buf);
void hs__unpack_section(const hs_plan p, const hs_section *s, char *field, const char *buf);
/* Pack every send section for peer into buf (send_bytes long). */
void hs__pack_sections(const hs_plan p, const hs_section *s, int n, void *const *arrays,
                       char *buf);
void hs__pack_peer(const hs_plan p, const hs_peer *peer, void *const *arrays, char *buf);
void hs__unpack_peer(const hs_plan p, const hs_peer *peer, void *const *arrays,
                     const char *buf);
void hs__self_copy(const hs_plan p, void *const *arrays);
/* Field f's self copies only. A transport's start may do the plan's self copies
 * itself, field by field beside its own work (the on-node engine's chunks): where
 * hs__self_copies_mine (the plan has some, and the core would do them: no delegation), it
 * copies every field's and then calls hs__self_copies_taken, and complete does not copy
 * them again (src/plan/plan.c). */
void hs__self_copy_field(const hs_plan p, void *const *arrays, int f);
bool hs__self_copies_mine(const hs_plan p);
void hs__self_copies_taken(hs_plan p);
/* The one walker of two copy programs with the same bytes in the same order whose runs may be
 * cut differently (other halo widths): fn(dst, src, n) on every common stretch, in order.
 * hs__copy_sections copies with it, the reverse combines with it (fn: its kernel). */
typedef void (*hs_run_fn)(char *restrict dst, const char *restrict src, size_t n);
void hs__walk_runs(const hs_section *src, const char *sfield, const hs_section *dst,
                   char *dfield, hs_run_fn fn);
/* Copy between two copy programs with the same bytes in the same order (a sender's strip in
 * its field, the receiver's halo box in its own field, possibly with other halo widths). */
void hs__copy_sections(const hs_plan p, const hs_section *src, const char *sfield,
                       const hs_section *dst, char *dfield);
/* Decide p->core->stream from the core option and the plan's halo bytes (after the geometry). */
void hs__stream_decide(hs_plan p);
/* A derived datatype that addresses the section relative to the field data pointer. Not
 * for callback fields. Caller frees. */
int hs__section_datatype(const hs_plan p, const hs_section *s, MPI_Datatype *out);

/* ---- datatype cache (src/geometry/dtypes.c): one per plan, shared by every transport */
typedef struct {
  MPI_Datatype *send, *recv; /* per peer index: all its sections, absolute addresses
                                (use MPI_BOTTOM); MPI_DATATYPE_NULL where it has none */
} hs_dtypes;
/* The datatypes for these arrays, built on first use and kept: the registered set for the
 * life of the plan, per-swap sets in a small least-recently-used cache (MONC's solver
 * passes the same source arrays every iteration). Not for plans with callback fields. */
int hs__dtypes_get(hs_plan p, void *const *arrays, const hs_dtypes **out);
/* The same sections field by field (send_fm, recv_fm): the bytes go in another order than
 * the message's, so only for exchanges where both sides use these types. Both sides then
 * walk their fields one at a time, a rank's unpack of a field close to its pack of it, and
 * an x face shares its lines with the halo beside it (MPI's fragments pipelined this way:
 * Open MPI 4.1, 8 single-precision fields at halo 5 across x, 766-1067 us against 1107-1345
 * in message order). */
int hs__dtypes_get_fieldwise(hs_plan p, void *const *arrays, const hs_dtypes **out);
/* The field-by-field types with one int ahead of each peer's data: sflag[k] in what goes to
 * peer k, rflag[k] in what comes from it (arrays that live as long as the plan; nbr's failure
 * flag; both sides of nbr use these).
 * Peers without data keep MPI_BYTE. Built on first use and kept with the set's entry. */
int hs__dtypes_get_flagged(hs_plan p, void *const *arrays, const int *sflag, int *rflag,
                           const hs_dtypes **out);
void hs__dtypes_free(hs_plan p);
#endif
