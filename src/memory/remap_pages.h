/* The pages of this process re-backed by memfds (src/memory/remap_pages.c): the layer of
 * remap.c below the plans, used only there (HS_HAVE_REMAP builds). */
#ifndef HS_REMAP_PAGES_H
#define HS_REMAP_PAGES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define MEMFD_NAME "haloswap-remap"

/* Pages of this process re-backed by one memfd; disjoint, sorted by start. */
typedef struct region {
  struct region *next;
  uintptr_t start, end;
  int fd;
  ino_t ino;
  int refs;
} region;
extern region *hs__regions;
/* New region over the pages [a, b): a memfd, the pages copied in, mapped over them (maps:
 * /proc/self/maps as hs__read_maps gives it). */
int hs__region_create(uintptr_t a, uintptr_t b, const char *maps, region **out);
/* Drop a reference; the last one gives the pages private anonymous memory back with their
 * contents, if /proc/self/maps still shows the memfd there. */
void hs__region_release(region *r);
char *hs__read_maps(void); /* /proc/self/maps, read whole; NULL on failure */
size_t hs__page_size(void);

#endif
