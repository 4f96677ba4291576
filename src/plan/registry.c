/* The transports this build contains, from transports.def, which CMake generates from the
 * transport.cmake file of every folder under src/transports/: built ones give their ops
 * symbol, known ones that this build leaves out give their id, name and the reason. */
#include "hs_core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HS_TRANSPORT(sym) extern const hs_transport_ops sym;
#define HS_UNBUILT(id, name, why)
#include "transports.def"
#undef HS_TRANSPORT
#undef HS_UNBUILT

static const hs_transport_ops *const registry[] = {
#define HS_TRANSPORT(sym) &sym,
#define HS_UNBUILT(id, name, why)
#include "transports.def"
#undef HS_TRANSPORT
#undef HS_UNBUILT
};

static const struct {
  hs_transport_id id;
  const char *name, *why;
} unbuilt[] = {
#define HS_TRANSPORT(sym)
#define HS_UNBUILT(id, name, why) {id, name, why},
#include "transports.def"
#undef HS_TRANSPORT
#undef HS_UNBUILT
    {HS_TRANSPORT_DEFAULT, NULL, NULL}};

int hs_transport_count(void) { return (int)(sizeof registry / sizeof registry[0]); }

const char *hs_transport_name(int i) {
  return (i >= 0 && i < hs_transport_count()) ? registry[i]->name : NULL;
}

const hs_transport_ops *hs__transport_find(const char *name) {
  for (int i = 0; name && i < hs_transport_count(); i++)
    if (!strcmp(registry[i]->name, name)) return registry[i];
  return NULL;
}

const hs_transport_ops *hs__transport_default(void) {
  for (int i = 0; i < hs_transport_count(); i++)
    if (registry[i]->flags & HS_OPS_DEFAULT) return registry[i];
  return NULL;
}

const char *hs__transport_known(hs_transport_id id, const char **why_unbuilt) {
  if (why_unbuilt) *why_unbuilt = NULL;
  if (id == HS_TRANSPORT_DEFAULT) return NULL;
  for (int i = 0; i < hs_transport_count(); i++)
    if (registry[i]->id == id) return registry[i]->name;
  for (int i = 0; unbuilt[i].name; i++)
    if (unbuilt[i].id == id) {
      if (why_unbuilt) *why_unbuilt = unbuilt[i].why;
      return unbuilt[i].name;
    }
  return NULL;
}

const char *hs__transport_unbuilt(const char *name) {
  for (int i = 0; name && unbuilt[i].name; i++)
    if (!strcmp(unbuilt[i].name, name)) return unbuilt[i].why;
  return NULL;
}

int hs__transport_unbuilt_error(const char *who, const char *name, const char *why) {
  return hs__error(HS_ERR_UNAVAILABLE, "%s%stransport %s is not built into this haloswap: %s",
                   who ? who : "", who ? ": " : "", name, why);
}

const char *hs_transport_id_name(hs_transport_id id) {
  if (id == HS_TRANSPORT_DEFAULT) {
    const char *env = getenv("HALOSWAP_TRANSPORT");
    const hs_transport_ops *d = hs__transport_default();
    return env && *env ? env : d ? d->name : NULL;
  }
  return hs__transport_known(id, NULL);
}

int hs_transport_available(MPI_Comm comm, const char *name, char *why, size_t len) {
  const hs_transport_ops *ops = name ? hs__transport_find(name) : NULL;
  if (why && len) why[0] = 0;
  const char *unbuilt_why = ops ? NULL : hs__transport_unbuilt(name);
  if (unbuilt_why) {
    if (why && len) snprintf(why, len, "not built into this haloswap: %s", unbuilt_why);
    return hs__transport_unbuilt_error(NULL, name, unbuilt_why);
  }
  if (!ops) {
    char list[512];
    hs__transport_list(list, sizeof list);
    return hs__error(HS_ERR_UNAVAILABLE, "transport '%s' is not built into this haloswap "
                                         "(built: %s)",
                     name ? name : "(null)", list);
  }
  char buf[256] = "";
  int rc = ops->query ? ops->query(comm, buf, sizeof buf) : HS_OK;
  if (why && len) {
    strncpy(why, buf, len - 1);
    why[len - 1] = 0;
  }
  if (rc != HS_OK) return hs__error(rc, "transport %s is not usable: %s", name, buf);
  return HS_OK;
}

void hs__transport_list(char *buf, size_t len) {
  size_t n = 0;
  if (len) buf[0] = 0;
  for (int i = 0; i < hs_transport_count(); i++)
    hs__appendf(buf, len, &n, "%s%s", i ? ", " : "", hs_transport_name(i));
}
