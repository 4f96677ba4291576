/* Replays kept fuzz inputs (files or directories of files) through a harness without libFuzzer,
 * built with the normal compiler: `make test` runs it over fuzz/regressions/<harness>/. */
#define _DEFAULT_SOURCE
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
void fuzz_finalize(void); /* each harness: MPI_Finalize and friends */

static int replay_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "replay: cannot open %s\n", path);
    return 1;
  }
  size_t cap = 1 << 16, n = 0;
  uint8_t *buf = malloc(cap);
  size_t got;
  while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
    n += got;
    if (n == cap) buf = realloc(buf, cap *= 2);
  }
  fclose(f);
  LLVMFuzzerTestOneInput(buf, n);
  free(buf);
  return 0;
}

static int cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv) {
  LLVMFuzzerInitialize(&argc, &argv);
  int files = 0, bad = 0;
  for (int i = 1; i < argc; i++) {
    struct stat st;
    if (stat(argv[i], &st) != 0) {
      fprintf(stderr, "replay: %s: no such file or directory\n", argv[i]);
      bad++;
      continue;
    }
    if (!S_ISDIR(st.st_mode)) {
      bad += replay_file(argv[i]);
      files++;
      continue;
    }
    DIR *d = opendir(argv[i]);
    struct dirent *e;
    char **names = NULL;
    int n = 0;
    while (d && (e = readdir(d))) {
      if (e->d_name[0] == '.') continue;
      names = realloc(names, (size_t)(n + 1) * sizeof *names);
      size_t l = strlen(argv[i]) + strlen(e->d_name) + 2;
      names[n] = malloc(l);
      snprintf(names[n++], l, "%s/%s", argv[i], e->d_name);
    }
    if (d) closedir(d);
    qsort(names, (size_t)n, sizeof *names, cmp);
    for (int k = 0; k < n; k++) {
      bad += replay_file(names[k]);
      files++;
      free(names[k]);
    }
    free(names);
  }
  printf("replay: %d inputs replayed, %d unreadable\n", files, bad);
  fuzz_finalize();
  /* Harnesses abort on a failed property, so reaching here means every input passed. */
  return bad || files == 0 ? 1 : 0;
}
