/* hs_info: what this haloswap build contains. Lists every transport, whether it is usable
 * here (run under mpiexec to ask on several ranks) and its options with their defaults.
 *   hs_info               the listing (the same as --help-transports), then the known
 *                         transports this build leaves out and why
 *   hs_info --markdown    the options as the Markdown table rows docs/api.md holds
 *   hs_info --names       one built transport name per line
 *   hs_info --usable-names  one name per line of the built transports usable here */
#include "haloswap.h"

#include <stdio.h>
#include <string.h>

static char buf[16384];

/* "  key=default  (allowed) help" lines -> "| name | `key` | default | allowed | help |".
 * The options of every transport (listed after the transport's own) get one row, the
 * first time, under "every transport". */
static void markdown(const char *name) {
  static int core_done = 0;
  int core = 0;
  char *line = strchr(buf, '\n');
  while (line && line[1]) {
    char *next = strchr(line + 1, '\n');
    if (next) *next = 0;
    char key[64], def[128], allowed[256];
    const char *s = line + 1;
    if (strstr(s, "options of every transport:")) {
      core = 1;
      name = "every transport";
    } else if (core && core_done) {
      /* printed already */
    } else if (sscanf(s, " %63[^=]=%127s (%255[^)])", key, def, allowed) == 3) {
      const char *help = strchr(s, ')');
      printf("| %s | `%s` | `%s` | ", name, key, def);
      for (const char *c = allowed; *c; c++) printf(*c == '|' ? "\\|" : "%c", *c);
      printf(" | %s |\n", help ? help + 2 : "");
    }
    line = next;
  }
  core_done |= core;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const char *mode = argc > 1 ? argv[1] : "--help-transports";
  if (strcmp(mode, "--help-transports") && strcmp(mode, "--markdown") && strcmp(mode, "--names") &&
      strcmp(mode, "--usable-names")) {
    if (rank == 0)
      fprintf(stderr, "usage: hs_info [--help-transports | --markdown | --names | --usable-names]\n");
    MPI_Finalize();
    return 2;
  }
  int rc = 0;
  if (rank == 0 && !strcmp(mode, "--help-transports"))
    printf("haloswap %s: %d transports built (HALOSWAP_TRANSPORT picks one, "
           "HALOSWAP_OPTIONS adds options)\n\n",
           hs_version(NULL, NULL, NULL), hs_transport_count());
  for (int i = 0; i < hs_transport_count(); i++) {
    const char *name = hs_transport_name(i);
    char why[256] = "";
    int usable = hs_transport_available(MPI_COMM_WORLD, name, why, sizeof why) == HS_OK;
    if (hs_transport_options(name, buf, sizeof buf) != HS_OK) {
      if (rank == 0) fprintf(stderr, "hs_info: %s\n", hs_error_message());
      rc = 1;
      continue;
    }
    if (rank != 0) continue;
    if (!strcmp(mode, "--names")) printf("%s\n", name);
    else if (!strcmp(mode, "--usable-names")) {
      if (usable) printf("%s\n", name);
    }
    else if (!strcmp(mode, "--markdown")) markdown(name);
    else printf("%s%s%s%s\n", buf, usable ? "" : "  NOT USABLE HERE: ", usable ? "" : why,
                usable ? "" : "\n");
  }
  /* Known transports this build leaves out, with the reason (the answer hs_plan_create,
   * hs_transport_available and auto give for them). */
  for (int id = 1; rank == 0 && !strcmp(mode, "--help-transports") && id < 64; id++) {
    const char *name = hs_transport_id_name((hs_transport_id)id);
    int built = 0;
    for (int i = 0; name && i < hs_transport_count(); i++) built |= !strcmp(name, hs_transport_name(i));
    if (!name || built) continue;
    char why[256] = "";
    hs_transport_available(MPI_COMM_SELF, name, why, sizeof why);
    printf("%s: NOT BUILT: %s\n\n", name, why);
  }
  MPI_Finalize();
  return rc;
}
