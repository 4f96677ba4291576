/* A plan's statistics, names and description (docs/api.md, "Statistics"). */
#include "hs_core.h"

#include <stdint.h>

static uint64_t bytes_allocated(hs_plan p) {
  hs_plan in[HS_MAX_INNER];
  uint64_t b = p->core->core_bytes + p->core->transport_bytes;
  for (int k = 0, n = hs__plan_inner(p, in); k < n; k++) b += bytes_allocated(in[k]);
  return b;
}

int hs_plan_get_stats(hs_plan p, hs_plan_stats *st) {
  if (!p || !st) return hs__error(HS_ERR_ARG, "hs_plan_get_stats: NULL argument");
  *st = p->core->stats;
  st->bytes_allocated = bytes_allocated(p);
  return HS_OK;
}

int hs_plan_reset_stats(hs_plan p) {
  if (!p) return hs__error(HS_ERR_ARG, "hs_plan_reset_stats: plan is NULL");
  p->core->stats.swaps = 0;
  p->core->stats.seconds_start = p->core->stats.seconds_complete = 0;
  p->core->stats.seconds_total = p->core->stats.seconds_exposed = p->core->stats.seconds_test = 0;
  p->core->stats.reverses = 0;
  p->core->stats.seconds_reverse = 0;
  return HS_OK;
}

const char *hs_plan_transport(hs_plan p) { return p ? p->transport_name : NULL; }

const char *hs_plan_selected_transport(hs_plan p) {
  if (!p) return NULL;
  hs_plan in[HS_MAX_INNER];
  return hs__plan_inner(p, in) ? hs_plan_selected_transport(in[0]) : p->transport_name;
}

int hs_plan_describe(hs_plan p, char *buf, size_t len) {
  if (!p || !buf || !len) return hs__error(HS_ERR_ARG, "hs_plan_describe: NULL argument");
  size_t n = 0;
  buf[0] = 0;
  hs__appendf(buf, len, &n, "transport %s", p->transport_name);
  hs__options_describe(p, buf, len, &n);
  hs__remap_describe(p, buf, len, &n);
  hs__appendf(buf, len, &n, "; rank %d; %d fields; depth %d,%d,%d; %s; %d offsets; ", p->rank,
              p->nfields, p->core->depth[0], p->core->depth[1], p->core->depth[2],
              p->core->stencil == HS_STENCIL_BOX ? "box" : "star", p->core->noffsets);
  hs__order_describe(p, buf, len, &n);
  hs__regions_describe(p, buf, len, &n);
  if (p->ops->describe_exchange) {
    p->ops->describe_exchange(p, buf, len, &n);
  } else {
    hs__appendf(buf, len, &n, "%d peers:", p->npeers);
    for (int k = 0; k < p->npeers; k++)
      hs__appendf(buf, len, &n, " [%d: send %zu B, recv %zu B]", p->peers[k].rank,
                  p->peers[k].send_bytes, p->peers[k].recv_bytes);
    hs__appendf(buf, len, &n, "; self %zu B", p->core->self_bytes);
  }
  hs__appendf(buf, len, &n, "; halo stores %s", p->core->stream ? "streaming" : "cached");
  hs__appendf(buf, len, &n, "; allocated %llu B", (unsigned long long)bytes_allocated(p));
  if (p->ops->describe && n + 1 < len) p->ops->describe(p, buf + n, len - n);
  return HS_OK;
}
