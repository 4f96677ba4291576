/* Core option remap=1, its lower layer: the pages of this process re-backed by memfds
 * (regions: disjoint, reference-counted by the plans that use them; docs/remap.md). */
#define _GNU_SOURCE
#include "hs_core.h"
#include "remap_pages.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef HS_HAVE_REMAP
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

region *hs__regions;

/* mmap and mremap straight to the kernel. Between copying pages and mapping over them no
 * code of this process may write to them: MPI libraries preload memory hooks (UCX's, loaded
 * by MPICH) that run inside a libc mmap, allocate on the heap and would so lose writes. The
 * hooks are told afterwards with madvise(MADV_DONTNEED), which they intercept to drop any
 * registration of the range and which, on a shared mapping, leaves the contents alone. */
static void *raw_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off) {
#if defined(SYS_mmap) && defined(__LP64__)
  return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
#else
  return mmap(addr, len, prot, flags, fd, off);
#endif
}

static void *raw_mremap_fixed(void *old, size_t len, void *to) {
#if defined(SYS_mremap)
  return (void *)syscall(SYS_mremap, old, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, to);
#else
  (void)old, (void)len, (void)to;
  return MAP_FAILED;
#endif
}

/* Copies whole pages, with whatever else of the process lies on them. Under AddressSanitizer
 * memcpy would report those other objects' bytes and the heap's redzones between them, so
 * the sanitizer build copies word by word outside its checks (volatile: no memcpy call). */
#if defined(__SANITIZE_ADDRESS__)
#define HS_REMAP_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HS_REMAP_ASAN 1
#endif
#endif
#ifdef HS_REMAP_ASAN
__attribute__((no_sanitize_address)) static void copy_pages(void *dst, const void *src,
                                                            size_t len) {
  volatile uint64_t *d = dst;
  const volatile uint64_t *s = src;
  for (size_t i = 0; i < len / sizeof *d; i++) d[i] = s[i];
}
#else
static void copy_pages(void *dst, const void *src, size_t len) { memcpy(dst, src, len); }
#endif

size_t hs__page_size(void) {
  long p = sysconf(_SC_PAGESIZE);
  return p > 0 ? (size_t)p : 4096;
}

/* /proc/self/maps, read whole. */
char *hs__read_maps(void) {
  FILE *f = fopen("/proc/self/maps", "r");
  if (!f) return NULL;
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  while (buf) {
    n += fread(buf + n, 1, cap - n - 1, f);
    if (n < cap - 1) break;
    char *nb = realloc(buf, cap *= 2);
    if (!nb) free(buf);
    buf = nb;
  }
  fclose(f);
  if (buf) buf[n] = 0;
  return buf;
}

/* Checks every mapping that covers [a, b): with ino != 0 they must all be our memfd of that
 * inode at the matching offset (from region start `rstart`); with ino == 0 they must be
 * private, writable and not a stack. 1 if so; else 0 and why. */
static int maps_check(const char *maps, uintptr_t a, uintptr_t b, ino_t ino, uintptr_t rstart,
                      char *why, size_t wlen) {
  uintptr_t covered = a;
  for (const char *l = maps; l && *l;) {
    const char *nl = strchr(l, '\n');
    unsigned long s, e, off, inode;
    char perms[8], dev[32];
    int pos = 0;
    if (sscanf(l, "%lx-%lx %7s %lx %31s %lu%n", &s, &e, perms, &off, dev, &inode, &pos) >= 6 &&
        e > a && s < b) {
      const char *path = l + pos, *eol = nl ? nl : l + strlen(l);
      while (path < eol && *path == ' ') path++; /* not past the line: anonymous has none */
      size_t plen = (size_t)(eol - path);
      if (s > covered) break; /* a hole */
      if (ino) {
        if ((ino_t)inode != ino || !memmem(path, plen, MEMFD_NAME, strlen(MEMFD_NAME)) ||
            s < rstart || off != s - rstart)
          break;
      } else if (perms[1] != 'w' || perms[3] != 'p' ||
                 memmem(path, plen, "[stack", 6) != NULL) {
        snprintf(why, wlen, "its pages %#lx-%#lx are mapped %s%s%.*s (only private writable "
                 "memory that is not a stack is remapped)", s, e, perms, plen ? " " : "",
                 (int)plen, path);
        return 0;
      }
      covered = e;
      if (covered >= b) return 1;
    }
    l = nl ? nl + 1 : NULL;
  }
  if (why) snprintf(why, wlen, "its pages are not all mapped");
  return 0;
}

/* New region over [a, b): memfd, copy, mmap over. */
int hs__region_create(uintptr_t a, uintptr_t b, const char *maps, region **out) {
  char why[256];
  size_t len = (size_t)(b - a);
  if (!maps_check(maps, a, b, 0, 0, why, sizeof why))
    return hs__error(HS_ERR_UNAVAILABLE, "remap: an array cannot be remapped: %s", why);
  int fd = (int)syscall(SYS_memfd_create, MEMFD_NAME, (unsigned)MFD_CLOEXEC);
  if (fd < 0)
    return hs__error(HS_ERR_UNAVAILABLE, "remap: memfd_create failed: %s%s", strerror(errno),
                     errno == ENOSYS || errno == EPERM ? " (kernel without memfd, or a seccomp "
                                                         "filter forbids it)" : "");
  struct stat st;
  int rc = HS_OK;
  void *tmp = MAP_FAILED;
  if (ftruncate(fd, (off_t)len) != 0 || fstat(fd, &st) != 0)
    rc = hs__error(HS_ERR_NOMEM, "remap: sizing a memfd to %zu bytes: %s", len, strerror(errno));
  if (rc == HS_OK) tmp = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (rc == HS_OK && tmp == MAP_FAILED)
    rc = hs__error(HS_ERR_NOMEM, "remap: mmap of a %zu-byte memfd: %s", len, strerror(errno));
  if (rc == HS_OK) {
    /* The pages hold the array and whatever else shares them: all of it moves, unchanged. */
    copy_pages(tmp, (void *)a, len);
    if (raw_mmap((void *)a, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) !=
        (void *)a)
      rc = hs__error(HS_ERR_NOMEM, "remap: mmap(MAP_FIXED) over %zu bytes at %p: %s", len,
                     (void *)a, strerror(errno));
    else
      madvise((void *)a, len, MADV_DONTNEED); /* tell the hooks; the memfd keeps the data */
  }
  if (tmp != MAP_FAILED) munmap(tmp, len);
  region *r = rc == HS_OK ? calloc(1, sizeof *r) : NULL;
  if (rc == HS_OK && !r) rc = hs__error(HS_ERR_NOMEM, "remap: out of memory");
  if (rc != HS_OK) {
    close(fd);
    return rc;
  }
  r->start = a;
  r->end = b;
  r->fd = fd;
  r->ino = st.st_ino;
  region **pp = &hs__regions;
  while (*pp && (*pp)->start < a) pp = &(*pp)->next;
  r->next = *pp;
  *pp = r;
  *out = r;
  return HS_OK;
}

/* Give the pages private anonymous memory back with their contents, if they are still ours. */
void hs__region_release(region *r) {
  if (--r->refs > 0) return;
  region **pp = &hs__regions;
  while (*pp && *pp != r) pp = &(*pp)->next;
  if (*pp) *pp = r->next;
  size_t len = (size_t)(r->end - r->start);
  char *maps = hs__read_maps();
  if (maps && maps_check(maps, r->start, r->end, r->ino, r->start, NULL, 0)) {
    madvise((void *)r->start, len, MADV_DONTNEED); /* tell the hooks (see raw_mmap) */
    void *tmp = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (tmp != MAP_FAILED) {
      copy_pages(tmp, (void *)r->start, len);
      /* Atomic: the copy replaces the memfd mapping. Failing that, fresh anonymous memory
       * and the contents copied back; failing that too, the memfd mapping stays (contents
       * right, no longer shared with anyone). */
      if (raw_mremap_fixed(tmp, len, (void *)r->start) != (void *)r->start) {
        if (raw_mmap((void *)r->start, len, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == (void *)r->start)
          copy_pages((void *)r->start, tmp, len);
        munmap(tmp, len);
      }
    }
  }
  free(maps);
  close(r->fd);
  free(r);
}

#endif
