/* Sanitizer runs only (LD_PRELOAD, HS_SANITIZE builds): dlclose does nothing, so the MPI
 * library's plug-ins (Open MPI's mca_*.so) stay mapped until exit and LeakSanitizer, which
 * reports at exit, can name the module of each allocation it reports. Without it, memory that
 * MPI_Finalize leaves behind in an unloaded plug-in shows as "<unknown module>" and cannot be
 * told apart from a haloswap leak (cmake/sanitizers.supp suppresses by module). */
int dlclose(void *handle);
int dlclose(void *handle) {
  (void)handle;
  return 0;
}
