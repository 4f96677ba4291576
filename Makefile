# haloswap: `make bench` (build + standard benchmark) and `make test` (whole suite, both MPIs).
SHELL := /bin/bash
JOBS ?= 2
MPIS ?= openmpi mpich
BUILD ?= build
CMAKE_FLAGS ?= -DHS_WERROR=ON

export OMPI_ALLOW_RUN_AS_ROOT := 1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM := 1
export OMPI_MCA_mpi_yield_when_idle := 1
export OMPI_MCA_rmaps_base_oversubscribe := 1

mpicc_openmpi := mpicc.openmpi
mpif90_openmpi := mpif90.openmpi
mpiexec_openmpi := /usr/bin/mpiexec.openmpi
mpicc_mpich := mpicc.mpich
mpif90_mpich := mpif90.mpich
mpiexec_mpich := /usr/bin/mpiexec.mpich

.PHONY: all deps build test test-beside-first test-sanitizers test-loaded bench clean dist build-asan python-asan test-asan build-smpi test-smpi $(addprefix build-,$(MPIS)) $(addprefix test-,$(MPIS)) $(addprefix python-,$(MPIS)) bench-python

all: build

deps:
	@bash tools/install-deps.sh

$(BUILD)/%/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD)/$* $(CMAKE_FLAGS) \
	  -DMPI_C_COMPILER=$(mpicc_$*) -DMPI_Fortran_COMPILER=$(mpif90_$*) \
	  -DMPIEXEC_EXECUTABLE=$(mpiexec_$*) >/dev/null

# Static pattern rules: make skips implicit-rule search for phony targets.
$(addprefix build-,$(MPIS)): build-%: deps $(BUILD)/%/CMakeCache.txt
	cmake --build $(BUILD)/$* -j $(JOBS)

build: $(addprefix build-,$(MPIS))

# The Python package (python/) in a venv per MPI library, under $(BUILD)/<mpi>/python, linked
# with that build's library; its tests are part of each MPI's ctest run (tests/python).
$(addprefix python-,$(MPIS)): python-%: build-%
	@bash tools/python-env.sh $* $(BUILD)/$*

# Tests in flight: sum of their ranks (CTest PROCESSORS). Launches mostly wait (MPI start-up,
# oversubscribed ranks yielding), so three per core keep the cores busy.
TEST_JOBS ?= $(shell echo $$((3 * $$(nproc))))

$(addprefix test-,$(MPIS)): test-%: build-% python-%
	cd $(BUILD)/$* && ctest --output-on-failure -j $(TEST_JOBS) $(CTEST_ARGS)

# AddressSanitizer + UndefinedBehaviorSanitizer build (Open MPI), C, Fortran and Python alike
# (docs/install.md): the C core's equivalence, error and race tests, the staged exchange in
# groups of fields; the Fortran module tests;
# every drop-in stand-in (asan_*: MONC, EPIC, Lare3d, EPOCH on p2p, shm, cma) and the
# parcel-clustering graph; the remote access layer; the Python tests (asan_python_*, in the
# venv python-asan makes); the layout checks and the proof that a short struct copy is
# reported (abi_*). 1-3 ranks.
ASAN_TESTS ?= ^(halo_equivalence_np(1|2)|halo_p2p_variants_np2|staged_groups_np(2|3)|errors_np[1-4]|race_rma_np(2|4)|fortran_(monc|fields|ra)_np2|faults_fortran_(p2p|shm)_np2|pc_graph_np(2|3)|ra_layer_np(2|3)|asan_.*|abi_.*)$$
# hs_info and parcel-cluster: installed, so python-asan can install the build.
ASAN_TARGETS := hs_keep_dl test_halo test_staged test_errors test_race test_fortran test_fields_fortran \
  test_ra_fortran faults_f test_pc_graph test_ra test_monc_dropin test_epic_dropin \
  test_lare3d_dropin test_epoch_dropin abi_layout_c abi_layout_f abi_layout_selftest_c \
  abi_layout_selftest_f abi_short_mirror hs_info parcel-cluster
$(BUILD)/asan/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD)/asan $(CMAKE_FLAGS) -DHS_SANITIZE=ON \
	  -DMPI_C_COMPILER=$(mpicc_openmpi) -DMPI_Fortran_COMPILER=$(mpif90_openmpi) \
	  -DMPIEXEC_EXECUTABLE=$(mpiexec_openmpi) >/dev/null

build-asan: deps $(BUILD)/asan/CMakeCache.txt
	cmake --build $(BUILD)/asan -j $(JOBS) --target $(ASAN_TARGETS)

python-asan: build-asan
	@bash tools/python-env.sh openmpi $(BUILD)/asan

test-asan: build-asan python-asan
	cd $(BUILD)/asan && ctest --output-on-failure -j $(JOBS) -R '$(ASAN_TESTS)' $(CTEST_ARGS)


# SimGrid SMPI (simulated ranks, docs/simulation.md): build/smpi, C only. SMPI_PRETEND_CC only
# while configuring (smpicc then builds plain test programs); make test runs the small SMPI check.
# Configured from inside the build tree: the pretending smpicc leaves a stray `.o` in the
# working directory.
$(BUILD)/smpi/CMakeCache.txt: | deps
	mkdir -p $(BUILD)/smpi && cd $(BUILD)/smpi && SMPI_PRETEND_CC=1 cmake -S $(CURDIR) -B . $(CMAKE_FLAGS) -DHS_ENABLE_FORTRAN=OFF \
	  -DCMAKE_C_COMPILER=smpicc -DCMAKE_Fortran_COMPILER=smpif90 -DMPI_C_COMPILER=smpicc \
	  -DMPI_Fortran_COMPILER=smpif90 -DMPIEXEC_EXECUTABLE=/usr/bin/smpirun >/dev/null

build-smpi: deps $(BUILD)/smpi/CMakeCache.txt
	cmake --build $(BUILD)/smpi -j $(JOBS) --target hs_sim

test-smpi: build-smpi
	cd $(BUILD)/smpi && ctest --output-on-failure -R '^smpi_' $(CTEST_ARGS)

# The first MPI's suite runs from the start; beside it, one after the other, the sanitizer
# build's and SimGrid's suites (test-sanitizers), the other MPIs' Python environments (mpi4py
# for MPICH compiles for about two minutes on one core, once per machine) and the other MPIs'
# suites. A suite's launches mostly wait (MPI start-up, oversubscribed ranks sleeping between
# polls), so one suite alone keeps 2 cores about 1.6 busy and two at once fill them (three at
# once measured 712 s against this order's 693 s: docs/install.md, "How long make test
# takes"). --output-sync=line keeps each suite's lines whole.
test:
	$(MAKE) -j 2 --output-sync=line test-$(firstword $(MPIS)) test-beside-first
	@echo "make test: all suites passed with: $(MPIS), the sanitizer build and SimGrid SMPI"

test-beside-first:
	$(MAKE) test-sanitizers
	$(if $(word 2,$(MPIS)),$(MAKE) $(addprefix test-,$(wordlist 2,$(words $(MPIS)),$(MPIS))))

test-sanitizers:
	$(MAKE) test-asan
	$(MAKE) test-smpi

# make test on a machine whose cores are busy with other work, as on a shared login node:
# tools/busy.c runs it beside one CPU-bound process per core and stops them when it ends
# (docs/install.md, "A loaded machine").
$(BUILD)/busy: tools/busy.c | deps
	mkdir -p $(BUILD) && $(CC) -std=c11 -O2 -Wall -Wextra -Werror -o $@ $<

test-loaded: $(BUILD)/busy
	$(BUILD)/busy -- $(MAKE) test

bench: build
	@bash bench/run-standard.sh $(BUILD) $(MPIS)

# The MONC case from Python (python/bench/bench_python.py): haloswap's Python swap against
# the same swap from C, GHEX's Python bindings, petsc4py and mpi4py, in one launch per MPI.
bench-python: deps
	@for m in $(MPIS); do bash tools/python-env.sh $$m $(BUILD)/$$m bench && \
	  /usr/bin/mpiexec.$$m -n 2 \
	    $(BUILD)/$$m/python/venv/bin/python python/bench/bench_python.py $(BENCH_ARGS) || exit 1; done

# The release tarball $(BUILD)/dist/haloswap-<version>.tar.gz: the Python sdist, carrying the
# C sources (csrc/) it builds the library from; Spack's package (spack/) builds the same file.
dist:
	@bash tools/make-dist.sh $(BUILD)/dist

clean:
	rm -rf $(BUILD)
