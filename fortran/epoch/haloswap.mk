# haloswap's make fragment for EPOCH (epoch3d; docs/epoch.md). Read after EPOCH's own Makefile:
#
#   cd epoch3d
#   make COMPILER=gfortran MPIF90=mpif90 -f Makefile \
#        -f <prefix>/share/haloswap/epoch/haloswap.mk HALOSWAP=<prefix>
#
# It compiles haloswap_epoch.F90 (next to this file) into EPOCH, links haloswap, and compiles
# src/boundary.F90 without the five routines haloswap_epoch provides (field_bc,
# do_field_mpi_with_lengths, do_field_mpi_with_lengths_r4, do_field_mpi_with_lengths_slice,
# particle_periodic_bcs): a copy of it in $(OBJDIR) with those routines taken out and
# `USE haloswap_epoch` added. The checkout's files are not changed.
ifeq ($(strip $(HALOSWAP)),)
  $(error haloswap.mk: set HALOSWAP=<haloswap install prefix>)
endif
HS_EPOCH_DIR := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))
HS_EPOCH_LIBS := $(shell PKG_CONFIG_PATH=$(HALOSWAP)/lib/pkgconfig \
  pkg-config --libs --static haloswap-fortran)
FFLAGS += -I$(HALOSWAP)/include
LDFLAGS += $(HS_EPOCH_LIBS)
VPATH := $(VPATH):$(HS_EPOCH_DIR)
# The link recipe expands OBJFILES when it runs; boundary.o's prerequisite builds it.
OBJFILES += haloswap_epoch.o

haloswap_epoch.o: haloswap_epoch.F90 constants.o shared_data.o utilities.o

HS_EPOCH_ROUTINES := FIELD_BC|DO_FIELD_MPI_WITH_LENGTHS|DO_FIELD_MPI_WITH_LENGTHS_R4|DO_FIELD_MPI_WITH_LENGTHS_SLICE|PARTICLE_PERIODIC_BCS
boundary.o: boundary.F90 haloswap_epoch.o
	@awk 'BEGIN { skip = 0; found = 0 } \
	  { u = toupper($$0) } \
	  u ~ /^[ \t]*MODULE[ \t]+BOUNDARY[ \t]*$$/ { print; print "  USE haloswap_epoch"; next } \
	  !skip && u ~ /^[ \t]*SUBROUTINE[ \t]+($(HS_EPOCH_ROUTINES))[ \t]*\(/ { skip = 1; found++; next } \
	  skip { if (u ~ /^[ \t]*END[ \t]+SUBROUTINE/) skip = 0; next } \
	  { print } \
	  END { if (found != 5) { printf "haloswap.mk: found %d of the 5 routines haloswap_epoch " \
	        "replaces in boundary.F90\n", found > "/dev/stderr"; exit 1 } }' \
	  $< > $(OBJDIR)/boundary.F90
	$(FC) -c $(FFLAGS) -o $(OBJDIR)/$@ $(PREPROFLAGS) $(OBJDIR)/boundary.F90
