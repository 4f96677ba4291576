/* parcel-cluster: command line driver.
 *   run (default)  merge cycles on an artificial or read configuration, optional NetCDF output
 *   --verify       parallel result == serial result, invariants, for several seeds/back ends
 *   --bench        10 merge cycles per back end, interleaved; times per phase (max over ranks)
 * See docs/parcel-cluster.md. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "pc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  int n[3];
  double extent[3], origin[3];
  pc_setup su;
  char backends[256];
  char seeds[256];
  int cycles;
  int verify, bench, serial;
  int min_vratio_given; /* --min-vratio on the command line (else a file's recorded value) */
  const char *read, *write, *write_result, *json, *expect_error;
  double tol;
} opts;

static void usage(void) {
  printf(
      "usage: parcel-cluster [--verify | --bench] [options]\n"
      "  --nx N --ny N --nz N          cells (default 32 32 32, as upstream)\n"
      "  --lx X --ly Y --lz Z          box extent (default 128 128 128); --origin X,Y,Z (default 0)\n"
      "  --nppc N                      parcels per cell (default 40)\n"
      "  --min-vratio R                vmin = cell volume / R (default 40, as upstream; with\n"
      "                                --read: the value the file records, if any)\n"
      "  --small-parcel-fraction F     fraction of small parcels (default 0.5)\n"
      "  --seed S | --seeds S1,S2,..   artificial configuration seed(s) (default 42)\n"
      "  --shuffle  --variable-nppc    as the original set-up\n"
      "  --backend LIST                p2p,rma,rma-epoch,shmem or all (default p2p)\n"
      "  --cycles K                    merge cycles (default 1; --bench 10)\n"
      "  --serial                      run the serial reference on rank 0 (run mode)\n"
      "  --read FILE                   EPIC parcel file (NetCDF) instead of a set-up\n"
      "  --write FILE / --write-result FILE   write the initial / final parcels (NetCDF)\n"
      "  --json FILE                   benchmark results as JSON\n"
      "  --tol T                       verify tolerance, relative above 1 (default 1e-14)\n"
      "  --expect-error TEXT           succeed only if input is refused with TEXT on every rank\n");
}

static int parse(int argc, char **argv, opts *o, int rank) {
  memset(o, 0, sizeof *o);
  /* Upstream's defaults (EPIC-model/parcel-clustering benchmark_random). */
  o->n[0] = o->n[1] = o->n[2] = 32;
  o->extent[0] = o->extent[1] = o->extent[2] = 128.0;
  o->su.nppc = 40;
  o->su.min_vratio = 40;
  o->su.small_fraction = 0.5;
  o->su.seed = 42;
  o->cycles = -1;
  o->tol = 1e-14;
  snprintf(o->backends, sizeof o->backends, "p2p");
  snprintf(o->seeds, sizeof o->seeds, "42");
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define VAL()                                                                  \
  do {                                                                         \
    if (!v) {                                                                  \
      if (rank == 0) fprintf(stderr, "parcel-cluster: %s needs a value\n", a); \
      return -1;                                                               \
    }                                                                          \
    i++;                                                                       \
  } while (0)
    if (!strcmp(a, "--nx")) { VAL(); o->n[0] = atoi(v); }
    else if (!strcmp(a, "--ny")) { VAL(); o->n[1] = atoi(v); }
    else if (!strcmp(a, "--nz")) { VAL(); o->n[2] = atoi(v); }
    else if (!strcmp(a, "--lx")) { VAL(); o->extent[0] = atof(v); }
    else if (!strcmp(a, "--ly")) { VAL(); o->extent[1] = atof(v); }
    else if (!strcmp(a, "--lz")) { VAL(); o->extent[2] = atof(v); }
    else if (!strcmp(a, "--origin")) {
      VAL();
      if (sscanf(v, "%lf,%lf,%lf", &o->origin[0], &o->origin[1], &o->origin[2]) != 3) {
        if (rank == 0) fprintf(stderr, "parcel-cluster: --origin '%s' must be X,Y,Z\n", v);
        return -1;
      }
    }
    else if (!strcmp(a, "--nppc")) { VAL(); o->su.nppc = atoi(v); }
    else if (!strcmp(a, "--min-vratio")) { VAL(); o->su.min_vratio = atof(v); o->min_vratio_given = 1; }
    else if (!strcmp(a, "--small-parcel-fraction")) { VAL(); o->su.small_fraction = atof(v); }
    else if (!strcmp(a, "--seed") || !strcmp(a, "--seeds")) { VAL(); snprintf(o->seeds, sizeof o->seeds, "%s", v); }
    else if (!strcmp(a, "--shuffle")) o->su.shuffle = 1;
    else if (!strcmp(a, "--variable-nppc")) o->su.variable_nppc = 1;
    else if (!strcmp(a, "--backend")) { VAL(); snprintf(o->backends, sizeof o->backends, "%s", v); }
    else if (!strcmp(a, "--cycles")) { VAL(); o->cycles = atoi(v); }
    else if (!strcmp(a, "--verify")) o->verify = 1;
    else if (!strcmp(a, "--bench")) o->bench = 1;
    else if (!strcmp(a, "--serial")) o->serial = 1;
    else if (!strcmp(a, "--read")) { VAL(); o->read = v; }
    else if (!strcmp(a, "--write")) { VAL(); o->write = v; }
    else if (!strcmp(a, "--write-result")) { VAL(); o->write_result = v; }
    else if (!strcmp(a, "--json")) { VAL(); o->json = v; }
    else if (!strcmp(a, "--tol")) { VAL(); o->tol = atof(v); }
    else if (!strcmp(a, "--expect-error")) { VAL(); o->expect_error = v; }
    else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      if (rank == 0) usage();
      return 1;
    } else {
      if (rank == 0) fprintf(stderr, "parcel-cluster: unknown option '%s' (see --help)\n", a);
      return -1;
    }
#undef VAL
  }
  if (o->cycles < 0) o->cycles = o->bench ? 10 : 1;
  if (!strcmp(o->backends, "all")) {
    char why[128];
    snprintf(o->backends, sizeof o->backends, "p2p,rma,rma-epoch%s",
             hs_ra_backend_available("shmem", why, sizeof why) == HS_OK ? ",shmem" : "");
  }
  const char *bad = NULL;
  char msg[160];
  for (int a = 0; a < 3; a++)
    if (o->n[a] < (a < 2 ? 2 : 1)) {
      snprintf(msg, sizeof msg, "--n%c = %d, must be >= %d", "xyz"[a], o->n[a], a < 2 ? 2 : 1);
      bad = msg;
    } else if (!(o->extent[a] > 0)) {
      snprintf(msg, sizeof msg, "--l%c = %g, must be > 0", "xyz"[a], o->extent[a]);
      bad = msg;
    }
  if (o->su.nppc < 1) bad = "--nppc must be >= 1";
  if (!(o->su.min_vratio > 0)) bad = "--min-vratio must be > 0";
  if (!(o->su.small_fraction >= 0 && o->su.small_fraction <= 1)) bad = "--small-parcel-fraction must be in [0, 1]";
  if (o->cycles < 1) bad = "--cycles must be >= 1";
  if (bad) {
    if (rank == 0) fprintf(stderr, "parcel-cluster: %s\n", bad);
    return -1;
  }
  return 0;
}

/* Split a comma list in place; returns the count. */
static int split(char *s, char **item, int max) {
  int k = 0;
  for (char *t = strtok(s, ","); t && k < max; t = strtok(NULL, ",")) item[k++] = t;
  return k;
}

/* ---------------------------------------------------------------- configurations */

typedef struct {
  pc_box box;
  int from_file;
  pc_set file_all; /* rank 0: the file's parcels */
} source;

/* This rank's parcels of configuration `seed` (and on rank 0 with want_all, all of them). */
static int make_config(pc_par *par, const source *src, const opts *o, uint64_t seed, pc_set *mine,
                       pc_set *all, int want_all) {
  mine->n = 0;
  if (src->from_file) {
    if (pc_scatter(par, &src->box, &src->file_all, mine) != HS_OK) return -1;
    if (want_all && par->rank == 0) {
      all->n = 0;
      if (pc_set_reserve(all, src->file_all.n + 1)) return -1;
      memcpy(all->p, src->file_all.p, (size_t)src->file_all.n * sizeof(pc_parcel));
      all->n = src->file_all.n;
    }
  } else {
    pc_setup su = o->su;
    su.seed = seed;
    if (pc_generate(&src->box, &su, par->lo[0], par->lo[0] + par->nloc[0], par->lo[1],
                    par->lo[1] + par->nloc[1], mine))
      return -1;
    if (want_all && par->rank == 0) {
      all->n = 0;
      if (pc_generate(&src->box, &su, 0, src->box.n[0], 0, src->box.n[1], all)) return -1;
    }
  }
  if (o->su.shuffle) {
    pc_shuffle(mine, seed * 7919u + (uint64_t)par->rank + 1u);
    if (want_all && par->rank == 0) pc_shuffle(all, seed * 7919u);
  }
  return 0;
}

static void sums(const pc_set *s, double out[5], double mag[5]) {
  for (int k = 0; k < 5; k++) out[k] = mag[k] = 0;
  for (int i = 0; i < s->n; i++) {
    const double *a = s->p[i].a, v = a[VOL];
    const double q[5] = {1.0, a[BUOY], a[XI], a[ETA], a[ZETA]};
    for (int k = 0; k < 5; k++) {
      out[k] += v * q[k];
      mag[k] += fabs(v * q[k]);
    }
  }
}

static int count_small(const pc_set *s, double vmin) {
  int c = 0;
  for (int i = 0; i < s->n; i++) c += s->p[i].a[VOL] < vmin;
  return c;
}

/* Rank 0: compare a result with the reference; returns 0 if equal within tol. */
static int compare(pc_set *ref, pc_set *res, double tol, double *maxdiff, char *why, size_t len) {
  *maxdiff = 0;
  if (ref->n != res->n) {
    snprintf(why, len, "parcel count %d, serial %d", res->n, ref->n);
    return -1;
  }
  pc_sort(ref->p, ref->n);
  pc_sort(res->p, res->n);
  int worst = -1, at = -1;
  /* Relative to the value's magnitude where that exceeds 1 (upstream's 128 m box). */
  for (int i = 0; i < ref->n; i++)
    for (int k = 0; k < PC_NATTR; k++) {
      double mag = fabs(ref->p[i].a[k]);
      double d = fabs(ref->p[i].a[k] - res->p[i].a[k]) / (mag > 1 ? mag : 1);
      if (!(d <= *maxdiff)) {
        *maxdiff = d;
        worst = k;
        at = i;
      }
    }
  if (*maxdiff > tol || *maxdiff != *maxdiff) {
    snprintf(why, len, "%s differs by %.3g (relative above 1) at sorted parcel %d (%.17g vs serial %.17g)",
             pc_attr_names[worst], *maxdiff, at, res->p[at].a[worst], ref->p[at].a[worst]);
    return -1;
  }
  return 0;
}

static int check_invariants(const pc_set *before, const pc_set *after, char *why, size_t len) {
  double s0[5], m0[5], s1[5], m1[5];
  static const char *nm[5] = {"volume", "volume-weighted buoyancy", "volume-weighted x_vorticity",
                              "volume-weighted y_vorticity", "volume-weighted z_vorticity"};
  sums(before, s0, m0);
  sums(after, s1, m1);
  for (int k = 0; k < 5; k++)
    if (fabs(s1[k] - s0[k]) > 1e-13 * (m0[k] > 1e-300 ? m0[k] : 1.0) + 1e-300) {
      snprintf(why, len, "total %s not conserved: %.17g before, %.17g after", nm[k], s0[k], s1[k]);
      return -1;
    }
  return 0;
}

static void info_sum(MPI_Comm comm, pc_cycle_info *in, pc_cycle_info *out) {
  long v[8] = {in->nsmall, in->nmerged_links, in->nremote_links, in->sent_for_merge,
               in->handed_over, in->unmerged_small, in->chain_violations, in->stage1_rounds};
  long r[8];
  MPI_Allreduce(v, r, 7, MPI_LONG, MPI_SUM, comm);
  MPI_Allreduce(&v[7], &r[7], 1, MPI_LONG, MPI_MAX, comm);
  *out = *in;
  out->nsmall = r[0];
  out->nmerged_links = r[1];
  out->nremote_links = r[2];
  out->sent_for_merge = r[3];
  out->handed_over = r[4];
  out->unmerged_small = r[5];
  out->chain_violations = r[6];
  out->stage1_rounds = r[7];
}

/* ---------------------------------------------------------------- verify */

/* Back end bk (ctx), opened on first use with room for init and a quarter more, and mine a
 * copy of init to cluster; nonzero (reported on rank 0) if it cannot be opened. */
static int start_backend(pc_par *par, pc_prune_ctx *ctx, const char *bk, const pc_set *init,
                         pc_set *mine) {
  if (!ctx->ra) {
    int cap = init->n + init->n / 4 + 16;
    MPI_Allreduce(MPI_IN_PLACE, &cap, 1, MPI_INT, MPI_MAX, par->comm);
    if (pc_prune_open(par, ctx, bk, cap) != HS_OK) {
      if (par->rank == 0) fprintf(stderr, "parcel-cluster: back end %s: %s\n", bk, hs_error_message());
      return 1;
    }
  }
  mine->n = 0;
  pc_set_reserve(mine, init->n + 1);
  memcpy(mine->p, init->p, (size_t)init->n * sizeof(pc_parcel));
  mine->n = init->n;
  return 0;
}

static int run_verify(pc_par *par, source *src, opts *o, char **bk, int nbk) {
  char seedbuf[256];
  snprintf(seedbuf, sizeof seedbuf, "%s", o->seeds);
  char *sd[64];
  int nsd = split(seedbuf, sd, 64), failures = 0, me = par->rank;
  double vmin = pc_vmin(&src->box, o->su.min_vratio);
  pc_prune_ctx ctx[8];
  memset(ctx, 0, sizeof ctx);
  for (int s = 0; s < nsd; s++) {
    uint64_t seed = strtoull(sd[s], NULL, 10);
    if (src->from_file) sd[s] = "file";
    pc_set init = {0}, all = {0}, ref = {0}, before = {0}, mine = {0}, res = {0};
    if (make_config(par, src, o, seed, &init, &all, 1)) return -1;
    /* Serial reference on rank 0. */
    char why[512] = "";
    int sbad = 0;
    pc_cycle_info sinfo;
    if (me == 0) {
      ref.n = 0;
      pc_set_reserve(&ref, all.n + 1);
      memcpy(ref.p, all.p, (size_t)all.n * sizeof(pc_parcel));
      ref.n = all.n;
      for (int c = 0; c < o->cycles && !sbad; c++) {
        pc_set_reserve(&before, ref.n + 1);
        memcpy(before.p, ref.p, (size_t)ref.n * sizeof(pc_parcel));
        before.n = ref.n;
        if (pc_cycle_serial(&src->box, vmin, &ref, &sinfo)) {
          snprintf(why, sizeof why, "serial cycle failed");
          sbad = 1;
        } else if (check_invariants(&before, &ref, why, sizeof why)) {
          sbad = 1;
        } else if (sinfo.unmerged_small || sinfo.chain_violations) {
          snprintf(why, sizeof why, "serial: %ld small parcels unmerged, %ld chains", sinfo.unmerged_small,
                   sinfo.chain_violations);
          sbad = 1;
        } else if (o->su.small_fraction <= 0.5 && !src->from_file && count_small(&ref, vmin)) {
          snprintf(why, sizeof why, "serial: %d small parcels remain", count_small(&ref, vmin));
          sbad = 1;
        }
      }
      printf("verify seed=%s serial: parcels %d -> %d, small %ld, merges %ld, stage-1 rounds %ld%s%s\n",
             sd[s], all.n, ref.n, sinfo.nsmall, sinfo.nmerged_links, sinfo.stage1_rounds,
             sbad ? ": FAIL " : "", why);
    }
    MPI_Bcast(&sbad, 1, MPI_INT, 0, par->comm);
    failures += sbad;
    for (int k = 0; k < nbk; k++) {
      if (start_backend(par, &ctx[k], bk[k], &init, &mine)) return -1;
      int bad = 0;
      double maxdiff = 0;
      pc_cycle_info info, tot;
      memset(&tot, 0, sizeof tot);
      why[0] = 0;
      for (int c = 0; c < o->cycles && !bad; c++) {
        pc_gather(par, &mine, &before);
        int rc = pc_cycle_parallel(par, &src->box, vmin, &mine, &ctx[k], &info);
        if (rc != HS_OK) {
          snprintf(why, sizeof why, "parallel cycle failed: %s", hs_error_message());
          bad = 1;
          break;
        }
        pc_cycle_info sum;
        info_sum(par->comm, &info, &sum);
        tot.nmerged_links += sum.nmerged_links;
        tot.nremote_links += sum.nremote_links;
        tot.stage1_rounds += sum.stage1_rounds;
        tot.unmerged_small = sum.unmerged_small;
        tot.chain_violations = sum.chain_violations;
        pc_gather(par, &mine, &res);
        if (me == 0) {
          if (check_invariants(&before, &res, why, sizeof why)) bad = 1;
          else if (tot.unmerged_small || tot.chain_violations) {
            snprintf(why, sizeof why, "%ld small parcels unmerged, %ld chain violations",
                     tot.unmerged_small, tot.chain_violations);
            bad = 1;
          } else if (o->su.small_fraction <= 0.5 && !src->from_file && count_small(&res, vmin)) {
            snprintf(why, sizeof why, "%d small parcels remain", count_small(&res, vmin));
            bad = 1;
          }
        }
        MPI_Bcast(&bad, 1, MPI_INT, 0, par->comm);
      }
      if (me == 0 && !bad && sbad == 0 && compare(&ref, &res, o->tol, &maxdiff, why, sizeof why)) bad = 1;
      MPI_Bcast(&bad, 1, MPI_INT, 0, par->comm);
      if (me == 0)
        printf("verify seed=%s backend=%s ranks=%d (%dx%d): parcels %d -> %d, merges %ld "
               "(%ld across ranks), stage-1 rounds %ld, max|diff| %.3g: %s%s%s\n",
               sd[s], bk[k], par->size, par->procs[0], par->procs[1], all.n, res.n,
               tot.nmerged_links, tot.nremote_links, tot.stage1_rounds, maxdiff,
               bad ? "FAIL" : "PASS", bad ? ": " : "", bad ? why : "");
      failures += bad;
    }
    pc_set_free(&init);
    pc_set_free(&all);
    pc_set_free(&ref);
    pc_set_free(&before);
    pc_set_free(&mine);
    pc_set_free(&res);
  }
  for (int k = 0; k < nbk; k++) pc_prune_close(&ctx[k]);
  if (me == 0) printf("verify: %s (%d failure%s)\n", failures ? "FAILED" : "all passed", failures,
                      failures == 1 ? "" : "s");
  fflush(stdout);
  return failures ? 1 : 0;
}

/* ---------------------------------------------------------------- bench */

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(const double *v, int n) {
  double *t = malloc((size_t)n * sizeof(double));
  memcpy(t, v, (size_t)n * sizeof(double));
  qsort(t, (size_t)n, sizeof(double), cmp_d);
  double m = n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
  free(t);
  return m;
}

static void json_array(FILE *f, const char *name, const double *v, int n, int last) {
  fprintf(f, "      \"%s\": [", name);
  for (int i = 0; i < n; i++) fprintf(f, "%s%.6e", i ? ", " : "", v[i]);
  fprintf(f, "]%s\n", last ? "" : ",");
}

static int run_bench(pc_par *par, source *src, opts *o, char **bk, int nbk) {
  const int nc = o->cycles, me = par->rank;
  double vmin = pc_vmin(&src->box, o->su.min_vratio);
  uint64_t seed = strtoull(o->seeds, NULL, 10);
  enum { SEARCH, GRAPH, PRUNE, MERGE, TOTAL, RAOPS, NPH };
  static const char *phn[NPH] = {"search", "graph", "prune", "merge", "total", "prune_remote_ops"};
  double *t = calloc((size_t)nbk * NPH * nc, sizeof(double));
  uint64_t cnt[8][6];
  long parcels[8][3];
  memset(cnt, 0, sizeof cnt);
  memset(parcels, 0, sizeof parcels);
  pc_prune_ctx ctx[8];
  memset(ctx, 0, sizeof ctx);
  pc_set init = {0}, mine = {0}, none = {0};
  for (int c = 0; c < nc; c++) {
    /* Every cycle starts from a fresh sample (not timed). */
    if (make_config(par, src, o, seed + (uint64_t)c, &init, &none, 0)) return -1;
    for (int k = 0; k < nbk; k++) {
      if (start_backend(par, &ctx[k], bk[k], &init, &mine)) return -1;
      hs_ra_reset_stats(ctx[k].ra);
      pc_cycle_info info, tot;
      MPI_Barrier(par->comm);
      int rc = pc_cycle_parallel(par, &src->box, vmin, &mine, &ctx[k], &info);
      if (rc != HS_OK) {
        if (me == 0) fprintf(stderr, "parcel-cluster: cycle failed: %s\n", hs_error_message());
        return -1;
      }
      hs_ra_stats st;
      hs_ra_get_stats(ctx[k].ra, &st);
      /* Time inside the layer's put/get/sync/complete calls: the communication part. */
      double ph[NPH] = {info.search, info.graph, info.prune, info.merge, info.total,
                        st.seconds_put + st.seconds_get + st.seconds_sync}, mx[NPH];
      MPI_Allreduce(ph, mx, NPH, MPI_DOUBLE, MPI_MAX, par->comm);
      for (int p = 0; p < NPH; p++) t[((size_t)k * NPH + p) * nc + c] = mx[p];
      uint64_t v[6] = {st.puts, st.gets, st.syncs, st.completes, st.messages, st.bytes}, r[6];
      MPI_Allreduce(v, r, 6, MPI_UINT64_T, MPI_SUM, par->comm);
      for (int q = 0; q < 6; q++) cnt[k][q] += r[q];
      cnt[k][2] = st.syncs; /* syncs are collective: per rank, last cycle */
      info_sum(par->comm, &info, &tot);
      long n0 = init.n, n1 = mine.n;
      MPI_Allreduce(MPI_IN_PLACE, &n0, 1, MPI_LONG, MPI_SUM, par->comm);
      MPI_Allreduce(MPI_IN_PLACE, &n1, 1, MPI_LONG, MPI_SUM, par->comm);
      parcels[k][0] += n0;
      parcels[k][1] += n1;
      parcels[k][2] += tot.nmerged_links;
    }
  }
  if (me == 0) {
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(lib, &len);
    for (int i = 0; i < len; i++) {
      if (lib[i] == '\n' || lib[i] == ',' || lib[i] == '"') {
        lib[i] = 0;
        break;
      }
      if ((unsigned char)lib[i] < 0x20) lib[i] = ' '; /* MPICH has a tab in it */
    }
    double p2p_prune = -1;
    for (int k = 0; k < nbk; k++)
      if (!strcmp(bk[k], "p2p")) p2p_prune = median(&t[((size_t)k * NPH + PRUNE) * nc], nc);
    printf("parcel-cluster bench: %d ranks (%dx%d), %dx%dx%d cells, %d parcels/cell, %d cycles, %s\n",
           par->size, par->procs[0], par->procs[1], src->box.n[0], src->box.n[1], src->box.n[2],
           o->su.nppc, nc, lib);
    printf("%-10s %10s %10s %10s %10s %10s %10s %9s %11s %11s %8s\n", "backend", "search",
           "graph", "prune", "(remote)", "merge", "total", "prune/p2p", "puts/cycle",
           "gets/cycle", "syncs");
    for (int k = 0; k < nbk; k++) {
      double md[NPH];
      for (int p = 0; p < NPH; p++) md[p] = median(&t[((size_t)k * NPH + p) * nc], nc);
      printf("%-10s %10.3e %10.3e %10.3e %10.3e %10.3e %10.3e %9.2f %11.0f %11.0f %8llu\n", bk[k],
             md[0], md[1], md[2], md[RAOPS], md[3], md[4], p2p_prune > 0 ? md[PRUNE] / p2p_prune : 0.0,
             (double)cnt[k][0] / nc, (double)cnt[k][1] / nc, (unsigned long long)cnt[k][2]);
    }
    printf("(median over cycles of the maximum over ranks, seconds; (remote) = time inside the\n"
           " remote access layer's put/get/sync calls, part of prune)\n");
    if (o->json) {
      FILE *f = fopen(o->json, "w");
      if (!f) {
        fprintf(stderr, "parcel-cluster: cannot write %s\n", o->json);
      } else {
        fprintf(f, "{\n  \"app\": \"parcel-cluster\",\n  \"mpi\": \"%s\",\n  \"ranks\": %d,\n"
                   "  \"procs\": [%d, %d],\n  \"grid\": [%d, %d, %d],\n  \"extent\": [%g, %g, %g],\n"
                   "  \"nppc\": %d,\n  \"min_vratio\": %g,\n  \"small_parcel_fraction\": %g,\n"
                   "  \"shuffle\": %s,\n  \"seed\": %llu,\n  \"source\": \"%s\",\n  \"cycles\": %d,\n"
                   "  \"timing\": \"seconds per cycle, maximum over ranks\",\n  \"backends\": [\n",
                lib, par->size, par->procs[0], par->procs[1], src->box.n[0], src->box.n[1],
                src->box.n[2], src->box.extent[0], src->box.extent[1], src->box.extent[2],
                o->su.nppc, o->su.min_vratio, o->su.small_fraction,
                o->su.shuffle ? "true" : "false", (unsigned long long)seed,
                o->read ? o->read : "artificial", nc);
        for (int k = 0; k < nbk; k++) {
          fprintf(f, "    {\n      \"name\": \"%s\",\n", bk[k]);
          for (int p = 0; p < NPH; p++) json_array(f, phn[p], &t[((size_t)k * NPH + p) * nc], nc, 0);
          fprintf(f, "      \"median\": {");
          for (int p = 0; p < NPH; p++)
            fprintf(f, "%s\"%s\": %.6e", p ? ", " : "", phn[p], median(&t[((size_t)k * NPH + p) * nc], nc));
          fprintf(f, "},\n");
          fprintf(f, "      \"prune_ratio_to_p2p\": %.4f,\n",
                  p2p_prune > 0 ? median(&t[((size_t)k * NPH + PRUNE) * nc], nc) / p2p_prune : 0.0);
          fprintf(f, "      \"remote_puts\": %llu,\n      \"remote_gets\": %llu,\n"
                     "      \"syncs_per_rank_last_cycle\": %llu,\n      \"completes\": %llu,\n"
                     "      \"p2p_messages\": %llu,\n      \"p2p_bytes\": %llu,\n"
                     "      \"parcels_before\": %ld,\n      \"parcels_after\": %ld,\n      \"merges\": %ld\n",
                  (unsigned long long)cnt[k][0], (unsigned long long)cnt[k][1],
                  (unsigned long long)cnt[k][2], (unsigned long long)cnt[k][3],
                  (unsigned long long)cnt[k][4], (unsigned long long)cnt[k][5], parcels[k][0],
                  parcels[k][1], parcels[k][2]);
          fprintf(f, "    }%s\n", k + 1 < nbk ? "," : "");
        }
        fprintf(f, "  ]\n}\n");
        fclose(f);
      }
    }
  }
  for (int k = 0; k < nbk; k++) pc_prune_close(&ctx[k]);
  pc_set_free(&init);
  pc_set_free(&mine);
  free(t);
  return 0;
}

/* ---------------------------------------------------------------- parameters vs input */

/* Collective. Adopts the min_vratio a file records unless --min-vratio was given (then a
 * different value is reported), and refuses a file in which the parameters make every parcel
 * small (vmin above the largest volume): EPIC files are written with min_vratio 40, and a
 * smaller ratio silently merges everything. A file with no small parcel only gets a note. */
static int check_file_params(opts *o, const pc_file_info *fi, const pc_box *b, const pc_set *all,
                             int rank, char *err, size_t len) {
  if (fi->min_vratio == fi->min_vratio) { /* recorded */
    if (!o->min_vratio_given) {
      o->su.min_vratio = fi->min_vratio;
      if (rank == 0)
        printf("parcel-cluster: min_vratio %g, as recorded in %s\n", fi->min_vratio, o->read);
    } else if (fi->min_vratio != o->su.min_vratio && rank == 0) {
      fprintf(stderr, "parcel-cluster: warning: --min-vratio %g differs from the %g recorded "
                      "in %s\n", o->su.min_vratio, fi->min_vratio, o->read);
    }
  }
  int bad = 0;
  char msg[1024] = "";
  if (rank == 0) {
    double vmin = pc_vmin(b, o->su.min_vratio), vmax = 0, vcell = b->dx[0] * b->dx[1] * b->dx[2];
    int nsmall = 0;
    for (int i = 0; i < all->n; i++) {
      nsmall += all->p[i].a[VOL] < vmin;
      if (all->p[i].a[VOL] > vmax) vmax = all->p[i].a[VOL];
    }
    if (all->n > 0 && nsmall == all->n) {
      bad = 1;
      snprintf(msg, sizeof msg,
               "%s: every one of the %d parcels is small (volume < vmin = cell volume / "
               "min_vratio = %g / %g = %g; the largest volume is %g): the parameters do not "
               "match the file; EPIC writes parcels with min_vratio 40 (the default); a "
               "min_vratio above %g leaves the largest parcel large",
               o->read, all->n, vcell, o->su.min_vratio, vmin, vmax, vcell / vmax);
    } else if (nsmall == 0) {
      printf("parcel-cluster: note: no parcel in %s is small (volume < vmin = %g): nothing to "
             "merge\n", o->read, vmin);
    }
  }
  MPI_Bcast(&o->su.min_vratio, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return pc_root_verdict(MPI_COMM_WORLD, bad, msg, err, len);
}

/* ---------------------------------------------------------------- run */

static pc_run_info run_info(const opts *o, const pc_par *par, const char *stage,
                            const char *backend) {
  pc_run_info r;
  memset(&r, 0, sizeof r);
  r.su = &o->su;
  r.stage = stage;
  r.input = o->read;
  r.backend = backend;
  r.cycles = !strcmp(stage, "initial") ? 0 : o->cycles;
  r.nranks = par->size;
  r.seed = strtoull(o->seeds, NULL, 10);
  return r;
}

static int write_all(pc_par *par, const pc_box *b, const pc_set *mine, const char *path,
                     const pc_run_info *run) {
  pc_set all = {0};
  pc_gather(par, mine, &all);
  int bad = 0;
  char err[512];
  if (par->rank == 0 && pc_write_netcdf(path, b, &all, par->size, run, err, sizeof err)) {
    fprintf(stderr, "parcel-cluster: %s\n", err);
    bad = 1;
  }
  MPI_Bcast(&bad, 1, MPI_INT, 0, par->comm);
  pc_set_free(&all);
  return bad;
}

static int run_plain(pc_par *par, source *src, opts *o, char **bk) {
  double vmin = pc_vmin(&src->box, o->su.min_vratio);
  uint64_t seed = strtoull(o->seeds, NULL, 10);
  pc_set mine = {0}, all = {0};
  if (make_config(par, src, o, seed, &mine, &all, o->serial)) return -1;
  pc_run_info ri = run_info(o, par, "initial", NULL);
  if (o->write && write_all(par, &src->box, &mine, o->write, &ri)) return 1;
  pc_cycle_info info, tot;
  if (o->serial) {
    if (par->rank == 0)
      for (int c = 0; c < o->cycles; c++) {
        int n0 = all.n;
        if (pc_cycle_serial(&src->box, vmin, &all, &info)) return 1;
        printf("serial cycle %d: parcels %d -> %d, small %ld, merges %ld, %.3e s\n", c, n0, all.n,
               info.nsmall, info.nmerged_links, info.total);
      }
    if (o->write_result) {
      int bad = 0;
      char err[512];
      ri = run_info(o, par, "merged", "serial");
      if (par->rank == 0 &&
          pc_write_netcdf(o->write_result, &src->box, &all, 1, &ri, err, sizeof err)) {
        fprintf(stderr, "parcel-cluster: %s\n", err);
        bad = 1;
      }
      MPI_Bcast(&bad, 1, MPI_INT, 0, par->comm);
      if (bad) return 1;
    }
  } else {
    pc_prune_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    int cap = mine.n + mine.n / 4 + 16;
    MPI_Allreduce(MPI_IN_PLACE, &cap, 1, MPI_INT, MPI_MAX, par->comm);
    if (pc_prune_open(par, &ctx, bk[0], cap) != HS_OK) {
      if (par->rank == 0) fprintf(stderr, "parcel-cluster: back end %s: %s\n", bk[0], hs_error_message());
      return 1;
    }
    for (int c = 0; c < o->cycles; c++) {
      long n0 = mine.n, n1;
      MPI_Allreduce(MPI_IN_PLACE, &n0, 1, MPI_LONG, MPI_SUM, par->comm);
      if (pc_cycle_parallel(par, &src->box, vmin, &mine, &ctx, &info) != HS_OK) {
        if (par->rank == 0) fprintf(stderr, "parcel-cluster: %s\n", hs_error_message());
        return 1;
      }
      info_sum(par->comm, &info, &tot);
      n1 = mine.n;
      MPI_Allreduce(MPI_IN_PLACE, &n1, 1, MPI_LONG, MPI_SUM, par->comm);
      double mt;
      MPI_Allreduce(&info.total, &mt, 1, MPI_DOUBLE, MPI_MAX, par->comm);
      if (par->rank == 0)
        printf("%s cycle %d: parcels %ld -> %ld, small %ld, merges %ld (%ld across ranks), %.3e s\n",
               bk[0], c, n0, n1, tot.nsmall, tot.nmerged_links, tot.nremote_links, mt);
    }
    pc_prune_close(&ctx);
    ri = run_info(o, par, "merged", bk[0]);
    if (o->write_result && write_all(par, &src->box, &mine, o->write_result, &ri)) return 1;
  }
  pc_set_free(&mine);
  pc_set_free(&all);
  return 0;
}

/* Open MPI 4.1's OpenSHMEM crashes in every process at shmem_finalize, after a correct run,
 * while the osc/rdma component is loaded; the component choice is made in MPI_Init, so the
 * program, which owns main, makes it before: with the shmem back end asked for (or "all") and
 * no osc setting in the environment, osc/rdma is excluded. A setting of the user's (the
 * environment, mpiexec --mca osc ...) is left alone; the library then refuses shmem with the
 * remedy rather than crash (hs_ra_backend_available). */
static void osc_for_shmem(int argc, char **argv) {
#if defined(OPEN_MPI) && OPEN_MPI && defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION < 5
  const char *list = "p2p";
  for (int i = 1; i + 1 < argc; i++)
    if (!strcmp(argv[i], "--backend")) list = argv[i + 1];
  if ((strstr(list, "shmem") || !strcmp(list, "all")) && !getenv("OMPI_MCA_osc"))
    setenv("OMPI_MCA_osc", "^rdma", 0);
#else
  (void)argc;
  (void)argv;
#endif
}

int main(int argc, char **argv) {
  osc_for_shmem(argc, argv);
  MPI_Init(&argc, &argv);
  int rank, size, ret = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  opts o;
  int pr = parse(argc, argv, &o, rank);
  if (pr) {
    hs_ra_finalize();
    return pr < 0 ? 2 : 0;
  }
  char bkbuf[256];
  snprintf(bkbuf, sizeof bkbuf, "%s", o.backends);
  char *bk[8];
  int nbk = split(bkbuf, bk, 8);
  for (int k = 0; k < nbk; k++) {
    char why[256];
    if (hs_ra_backend_available(bk[k], why, sizeof why) != HS_OK) {
      if (rank == 0) fprintf(stderr, "parcel-cluster: back end '%s': %s\n", bk[k], why);
      hs_ra_finalize();
      return 2;
    }
  }
  source src;
  memset(&src, 0, sizeof src);
  if (o.read) {
    char err[1024];
    pc_file_info fi;
    int bad = pc_read_netcdf(MPI_COMM_WORLD, o.read, &src.box, &src.file_all, &fi, err, sizeof err);
    if (!bad) bad = check_file_params(&o, &fi, &src.box, &src.file_all, rank, err, sizeof err);
    if (bad) {
      /* Every rank reports the refusal; none has started any work. */
      fprintf(stderr, "parcel-cluster[rank %d]: error: %s\n", rank, err);
      int ok = o.expect_error && strstr(err, o.expect_error) != NULL, all_ok;
      MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
      if (o.expect_error && rank == 0)
        printf("refused on every rank as expected (\"%s\"): %s\n", o.expect_error,
               all_ok ? "PASS" : "FAIL");
      hs_ra_finalize();
      return all_ok ? 0 : 1;
    }
    src.from_file = 1;
  } else {
    pc_box_init(&src.box, o.n, o.origin, o.extent);
  }
  if (o.expect_error) {
    if (rank == 0) printf("expected the input to be refused with \"%s\", but it was accepted: FAIL\n",
                          o.expect_error);
    hs_ra_finalize();
    return 1;
  }
  pc_par par;
  int rc = pc_par_init(MPI_COMM_WORLD, &src.box, &par);
  if (rc != HS_OK) {
    if (rank == 0) fprintf(stderr, "parcel-cluster: decomposition: %s\n", hs_error_message());
    hs_ra_finalize();
    return 2;
  }
  if (o.verify)
    ret = run_verify(&par, &src, &o, bk, nbk);
  else if (o.bench)
    ret = run_bench(&par, &src, &o, bk, nbk);
  else
    ret = run_plain(&par, &src, &o, bk);
  if (ret < 0) ret = 1;
  pc_set_free(&src.file_all);
  pc_par_free(&par);
  hs_ra_finalize();
  return ret;
}
