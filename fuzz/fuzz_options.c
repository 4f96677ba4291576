/* libFuzzer harness: the transport name / option parser, through hs_plan_create at 1 rank.
 * Input: one flags byte, then up to three strings separated by '\n':
 *   transport_name, options, HALOSWAP_OPTIONS (flags choose which are NULL / unset).
 * Property: hs_plan_create returns HS_OK or an error code with a non-empty message; an accepted
 * plan swaps and frees cleanly (sanitizers catch the rest). */
#define _POSIX_C_SOURCE 200809L
#include "haloswap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static hs_decomp dec;
static double *field;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  MPI_Init(argc, argv);
  hs_decomp_desc dd;
  hs_decomp_desc_init(&dd);
  dd.global[0] = dd.global[1] = 6;
  dd.global[2] = 2;
  if (hs_decomp_create(MPI_COMM_SELF, &dd, &dec) != HS_OK) {
    fprintf(stderr, "fuzz_options: decomposition: %s\n", hs_error_message());
    abort();
  }
  field = calloc((6 + 2) * (6 + 2) * 2, sizeof *field);
  return 0;
}

void fuzz_finalize(void) {
  hs_decomp_free(&dec);
  free(field);
  MPI_Finalize();
}

/* Next '\n'-terminated piece of [*p, end) as a fresh string. */
static char *piece(const uint8_t **p, const uint8_t *end) {
  const uint8_t *s = *p, *e = s;
  while (e < end && *e != '\n') e++;
  char *out = malloc((size_t)(e - s) + 1);
  memcpy(out, s, (size_t)(e - s));
  out[e - s] = 0;
  *p = e < end ? e + 1 : e;
  return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  uint8_t flags = data[0];
  const uint8_t *p = data + 1, *end = data + size;
  char *name = piece(&p, end), *opts = piece(&p, end), *env = piece(&p, end);
  if (flags & 4) setenv("HALOSWAP_OPTIONS", env, 1);
  else unsetenv("HALOSWAP_OPTIONS");
  if (flags & 8) setenv("HALOSWAP_TRANSPORT", name, 1);
  else unsetenv("HALOSWAP_TRANSPORT");
  hs_field f = hs_field_array(HS_FLOAT64, field, HS_LAYOUT_ZFAST, 1);
  f.halo[2] = 0;
  hs_plan_desc pd;
  hs_plan_desc_init(&pd);
  pd.nfields = 1;
  pd.fields = &f;
  pd.transport_name = (flags & 1) ? NULL : name;
  pd.options = (flags & 2) ? NULL : opts;
  if (flags & 16) pd.transport = (hs_transport_id)(flags >> 5);
  hs_plan plan = NULL;
  int rc = hs_plan_create(dec, &pd, &plan);
  if (rc != HS_OK) {
    if (plan != NULL || rc < 0 || rc > HS_ERR_INTERNAL || hs_error_message()[0] == 0) {
      fprintf(stderr, "fuzz_options: bad failure: rc %d plan %p msg '%s'\n", rc, (void *)plan,
              hs_error_message());
      abort();
    }
  } else {
    if (hs_swap(plan, NULL) != HS_OK || hs_plan_free(&plan) != HS_OK) {
      fprintf(stderr, "fuzz_options: accepted plan fails: %s\n", hs_error_message());
      abort();
    }
  }
  unsetenv("HALOSWAP_OPTIONS");
  unsetenv("HALOSWAP_TRANSPORT");
  free(name);
  free(opts);
  free(env);
  return 0;
}
