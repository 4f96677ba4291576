/* Transport options: parsed from text, checked against the transport's typed specs, and
 * written into its config struct by the core, the same way for every transport. */
#include "hs_core.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t hs__list_item(const char *s, const char *seps) {
  int depth = 0;
  size_t n = 0;
  for (; s[n]; n++) {
    if (s[n] == '[') depth++;
    else if (s[n] == ']' && depth > 0) depth--;
    else if (depth == 0 && strchr(seps, s[n])) break;
  }
  return n;
}

int hs__options_add(hs_plan p, const char *list, const char *origin) {
  if (!list) return HS_OK;
  const char *s = list;
  while (*s) {
    size_t n = hs__list_item(s, ",");
    if (n > 0) {
      const char *eq = memchr(s, '=', n);
      if (!eq || eq == s)
        return hs__error(HS_ERR_ARG, "%s: option '%.*s' is not of the form key=value", origin,
                         (int)n, s);
      size_t kl = (size_t)(eq - s), vl = n - kl - 1;
      const char *v = eq + 1;
      if (vl >= 2 && v[0] == '[' && v[vl - 1] == ']') { /* [a,b] holds commas */
        v++;
        vl -= 2;
      }
      if (kl >= HS_OPT_KEY_LEN || vl >= HS_OPT_VAL_LEN)
        return hs__error(HS_ERR_ARG, "%s: option '%.*s' is too long (key < %d, value < %d "
                                     "characters)",
                         origin, (int)n, s, HS_OPT_KEY_LEN, HS_OPT_VAL_LEN);
      int slot = -1;
      for (int i = 0; i < p->core->noptions; i++)
        if (strlen(p->core->options[i].key) == kl && !strncmp(p->core->options[i].key, s, kl))
          slot = i;
      if (slot < 0) {
        if (p->core->noptions == HS_MAX_OPTIONS)
          return hs__error(HS_ERR_ARG, "%s: more than %d options", origin, HS_MAX_OPTIONS);
        slot = p->core->noptions++;
      }
      hs_option *o = &p->core->options[slot];
      memcpy(o->key, s, kl);
      o->key[kl] = 0;
      memcpy(o->val, v, vl);
      o->val[vl] = 0;
      o->origin = origin;
    }
    s += n;
    if (*s == ',') s++;
  }
  return HS_OK;
}

static const char *const stream_vals[] = {"auto", "0", "1", NULL};

/* Options of the core, accepted by every transport; they fill p->core->config. */
static const hs_option_spec core_options[] = {
    HS_OPTION_BOOL("staged", "0", hs_core_config, staged,
     "exchange along x, then y, then z, each stage's faces carrying the halos filled before "
     "it: 2 messages per exchanged axis instead of up to 26 (not for auto itself: give it to "
     "a candidate)"),
    HS_OPTION_BOOL("remap", "0", hs_core_config, remap,
     "at plan creation, re-back each registered array that is not hs_alloc'd with node-shared "
     "memory in place (memfd, contents and pointer kept) so transports reading a neighbour's "
     "field directly serve it; Linux >= 5.6 (docs/remap.md)"),
    HS_OPTION_INT("stage_fields", "0", 0, 1 << 20, hs_core_config, stage_fields,
     "with staged=1: the fields in groups of this many, each group through every stage before "
     "the next starts (GHEX cartex's MPI order: a group's halo lines stay in cache from one "
     "axis to the next); 0: every field in every stage"),
    HS_OPTION_CHOICE("stream", "auto", stream_vals, hs_core_config, stream,
     "write halo cells with streaming (non-temporal) stores, which skip reading each line "
     "before it is overwritten; auto: when the plan's fields exceed this core's share of the "
     "last-level cache, so the halo would not stay cached until the model reads it (x86-64; "
     "docs/design.md)"),
    HS_OPTIONS_END};

static const hs_option_spec *table_find(const hs_option_spec *t, const char *key, int *idx) {
  for (int i = 0; t && t[i].key; i++)
    if (!strcmp(t[i].key, key)) {
      if (idx) *idx = i;
      return &t[i];
    }
  return NULL;
}

static const hs_option_spec *spec_find(const hs_transport_ops *ops, const char *key, int *idx) {
  return table_find(ops->options, key, idx);
}

/* "0 or 1", "an integer in [1, 64]", "one of put|get", "any text". */
static void allowed_text(const hs_option_spec *s, char *buf, size_t len) {
  size_t n = 0;
  buf[0] = 0;
  switch (s->kind) {
  case HS_OPT_BOOL: hs__appendf(buf, len, &n, "0 or 1"); break;
  case HS_OPT_INT: hs__appendf(buf, len, &n, "an integer in [%d, %d]", s->min, s->max); break;
  case HS_OPT_CHOICE:
    hs__appendf(buf, len, &n, "one of ");
    for (int i = 0; s->choices[i]; i++) hs__appendf(buf, len, &n, "%s%s", i ? "|" : "", s->choices[i]);
    break;
  default: hs__appendf(buf, len, &n, "any text"); break;
  }
}

static int parse_value(const hs_plan p, const hs_option_spec *s, const char *v, char *cfg) {
  char allowed[256];
  allowed_text(s, allowed, sizeof allowed);
  if (s->kind == HS_OPT_STRING) {
    snprintf(cfg + s->offset, HS_OPT_VAL_LEN, "%s", v);
    return HS_OK;
  }
  int x = -1;
  bool ok = false;
  if (s->kind == HS_OPT_CHOICE) {
    for (int i = 0; s->choices[i]; i++)
      if (!strcmp(v, s->choices[i])) {
        x = i;
        ok = true;
      }
  } else {
    char *end;
    errno = 0;
    long l = strtol(v, &end, 10);
    int lo = s->kind == HS_OPT_BOOL ? 0 : s->min, hi = s->kind == HS_OPT_BOOL ? 1 : s->max;
    ok = *v && !*end && errno == 0 && l >= lo && l <= hi;
    x = (int)l;
  }
  if (!ok)
    return hs__error(HS_ERR_ARG, "hs_plan_create: transport %s: option %s = '%s' is not allowed "
                                 "(allowed: %s; default %s)",
                     p->transport_name, s->key, v, allowed, s->def);
  memcpy(cfg + s->offset, &x, sizeof x);
  return HS_OK;
}

int hs__options_resolve(hs_plan p) {
  const hs_transport_ops *ops = p->core->transport;
  p->core->options_given = 0;
  for (int i = 0; i < p->core->noptions; i++) {
    int idx;
    if (table_find(core_options, p->core->options[i].key, &idx)) {
      p->core->config_given |= 1u << idx;
      continue;
    }
    if (!spec_find(ops, p->core->options[i].key, &idx)) {
      char list[512] = "", core[256] = "";
      size_t n = 0, m = 0;
      for (int k = 0; ops->options && ops->options[k].key; k++)
        hs__appendf(list, sizeof list, &n, "%s%s", k ? ", " : "", ops->options[k].key);
      for (int k = 0; core_options[k].key; k++)
        hs__appendf(core, sizeof core, &m, "%s%s", k ? ", " : "", core_options[k].key);
      return hs__error(HS_ERR_ARG, "hs_plan_create: transport %s has no option '%s' (from %s; "
                                   "its options: %s); every transport also takes: %s",
                       p->transport_name, p->core->options[i].key, p->core->options[i].origin,
                       list[0] ? list : "none", core);
    }
    p->core->options_given |= 1u << idx;
  }
  for (int k = 0; core_options[k].key; k++) {
    const hs_option_spec *s = &core_options[k];
    const char *v = s->def;
    for (int i = 0; i < p->core->noptions; i++)
      if (!strcmp(p->core->options[i].key, s->key)) v = p->core->options[i].val;
    int rc = parse_value(p, s, v, (char *)&p->core->config);
    if (rc != HS_OK) return rc;
  }
  if (!ops->config_size) return HS_OK;
  p->config = calloc(1, ops->config_size);
  if (!p->config) return hs__error(HS_ERR_NOMEM, "hs_plan_create: out of memory");
  for (int k = 0; ops->options && ops->options[k].key; k++) {
    const hs_option_spec *s = &ops->options[k];
    const char *v = s->def;
    for (int i = 0; i < p->core->noptions; i++)
      if (!strcmp(p->core->options[i].key, s->key)) v = p->core->options[i].val;
    int rc = parse_value(p, s, v, p->config);
    if (rc != HS_OK) return rc;
  }
  return HS_OK;
}

int hs__options_defaults(const hs_plan p, const hs_option_spec *table, void *cfg) {
  for (int k = 0; table && table[k].key; k++) {
    int rc = parse_value(p, &table[k], table[k].def, cfg);
    if (rc != HS_OK) return rc;
  }
  return HS_OK;
}

bool hs__option_given(const hs_plan p, const char *key) {
  int idx;
  if (table_find(core_options, key, &idx)) return p->core->config_given >> idx & 1u;
  return spec_find(p->core->transport, key, &idx) && (p->core->options_given >> idx & 1u);
}

bool hs__core_option(const char *key) { return table_find(core_options, key, NULL) != NULL; }

void hs__options_describe(const hs_plan p, char *buf, size_t len, size_t *n) {
  int k = 0;
  for (int t = 0; t < 2; t++) {
    const hs_option_spec *tab = t == 0 ? p->core->transport->options : core_options;
    for (int j = 0; tab && tab[j].key; j++, k++) {
      const hs_option_spec *s = &tab[j];
      const char *v = s->def;
      for (int i = 0; i < p->core->noptions; i++)
        if (!strcmp(p->core->options[i].key, s->key)) v = p->core->options[i].val;
      hs__appendf(buf, len, n, "%s%s=%s", k ? "," : ":", s->key,
                  s->kind == HS_OPT_STRING && strchr(v, ',') ? "[...]" : v);
    }
  }
}

int hs_transport_options(const char *name, char *buf, size_t len) {
  if (!name || !buf || !len)
    return hs__error(HS_ERR_ARG, "hs_transport_options: name, buf and len must be given");
  const hs_transport_ops *ops = hs__transport_find(name);
  const char *why = ops ? NULL : hs__transport_unbuilt(name);
  if (why) return hs__transport_unbuilt_error("hs_transport_options", name, why);
  if (!ops) {
    char list[512];
    hs__transport_list(list, sizeof list);
    return hs__error(HS_ERR_UNAVAILABLE, "hs_transport_options: transport '%s' is not built "
                                         "into this haloswap (built: %s)",
                     name, list);
  }
  size_t n = 0;
  buf[0] = 0;
  hs__appendf(buf, len, &n, "%s: %s\n", ops->name, ops->summary);
  if (!ops->options || !ops->options[0].key) hs__appendf(buf, len, &n, "  (no options)\n");
  for (int t = 0; t < 2; t++) {
    const hs_option_spec *tab = t == 0 ? ops->options : core_options;
    if (t == 1) hs__appendf(buf, len, &n, "  options of every transport:\n");
    for (int k = 0; tab && tab[k].key; k++) {
      const hs_option_spec *s = &tab[k];
      char allowed[256];
      allowed_text(s, allowed, sizeof allowed);
      hs__appendf(buf, len, &n, "  %s=%s  (%s) %s\n", s->key, s->def[0] ? s->def : "\"\"",
                  allowed, s->help);
    }
  }
  if (n >= len)
    return hs__error(HS_ERR_ARG, "hs_transport_options: buffer of %zu bytes too small (needs %zu)",
                     len, n + 1);
  return HS_OK;
}

/* ------------------------------------------------------------------ transport choice */
int hs__transport_resolve(hs_plan p, const hs_plan_desc *desc, bool nested,
                          const hs_plan parent) {
  const char *spec = desc->transport_name;
  if (!spec) {
    const char *why = NULL;
    spec = desc->transport == HS_TRANSPORT_DEFAULT ? hs_transport_id_name(desc->transport)
                                                   : hs__transport_known(desc->transport, &why);
    if (!spec)
      return hs__error(HS_ERR_ARG, "hs_plan_create: transport = %d is not an hs_transport_id",
                       (int)desc->transport);
    if (why) return hs__transport_unbuilt_error("hs_plan_create", spec, why);
  }
  const char *colon = strchr(spec, ':');
  size_t n = colon ? (size_t)(colon - spec) : strlen(spec);
  if (n == 0 || n >= sizeof p->transport_name)
    return hs__error(HS_ERR_ARG, "hs_plan_create: transport name '%s' is empty or too long",
                     spec);
  memcpy(p->transport_name, spec, n);
  p->transport_name[n] = 0;
  for (char *c = p->transport_name; *c; c++)
    if (*c == '_') *c = '-';
  p->ops = p->core->transport = hs__transport_find(p->transport_name);
  const char *why = p->ops ? NULL : hs__transport_unbuilt(p->transport_name);
  if (why) return hs__transport_unbuilt_error("hs_plan_create", p->transport_name, why);
  if (!p->ops) {
    char list[512];
    hs__transport_list(list, sizeof list);
    return hs__error(HS_ERR_ARG, "hs_plan_create: unknown transport '%s' (built: %s)",
                     p->transport_name, list);
  }
  int rc = HS_OK;
  /* A plan nested in one of the same transport takes its options as parsed, less the core's. */
  for (int i = 0; parent && i < parent->core->noptions; i++)
    if (!hs__core_option(parent->core->options[i].key))
      p->core->options[p->core->noptions++] = parent->core->options[i];
  if (!nested)
    rc = hs__options_add(p, getenv("HALOSWAP_OPTIONS"), "HALOSWAP_OPTIONS");
  if (rc == HS_OK && colon) rc = hs__options_add(p, colon + 1, "the transport name");
  if (rc == HS_OK) rc = hs__options_add(p, desc->options, "hs_plan_desc.options");
  if (rc == HS_OK) rc = hs__options_resolve(p);
  return rc;
}
