# haloswap's Spack package (docs/install.md, "Spack"); tools/check-spack installs it with a
# real Spack. The source is the release tarball `make dist` writes (the Python sdist, whose
# csrc/ holds the C library's CMake project), so pip and Spack build the same file.
import os

import spack
from spack.package import *

try:  # Spack 1.x keeps the build systems in its builtin package repository
    from spack_repo.builtin.build_systems.cmake import CMakePackage
except ImportError:
    pass


class Haloswap(CMakePackage):
    """Halo exchange for structured grids over interchangeable MPI-3 transports (two-sided,
    neighbourhood collectives, RMA, MPI shared memory, CMA, OpenSHMEM), with Fortran 2008
    drop-in modules (MONC, EPIC, Lare3d, EPOCH) and a Python package (numpy + mpi4py)."""

    # No public download yet: the tarball comes from a mirror (spack mirror add), found there
    # as haloswap/haloswap-VERSION.tar.gz. This url only gives that name (.invalid never
    # resolves); a release replaces it with where the tarball is published.
    url = "https://haloswap.invalid/haloswap-0.1.0.tar.gz"

    # No release is published yet: a version gets its sha256 when its tarball is. Until
    # then install the tarball of a checkout from a mirror with --no-checksum
    # (tools/check-spack).
    version("0.1.0")

    variant("fortran", default=False, description="Build the Fortran 2008 modules")
    variant("python", default=False, description="Build the Python package (mpi4py + numpy)")
    variant(
        "shmem",
        default=False,
        description="Build the OpenSHMEM transport (Open MPI's OSHMEM)",
    )

    root_cmakelists_dir = "csrc"

    if spack.spack_version_info >= (1,):  # compilers are dependencies from Spack 1.0 on
        depends_on("c", type="build")
        depends_on("fortran", type="build", when="+fortran")
    depends_on("cmake@3.18:", type="build")
    # The MPI provider (^openmpi, ^mpich, ...): MPI-3 with mpi_f08 for the Fortran modules.
    depends_on("mpi@3:")
    depends_on("openmpi+openshmem", when="+shmem")

    with when("+python"):
        extends("python")
        depends_on("python@3.9:", type=("build", "run"))
        depends_on("py-pip", type="build")
        depends_on("py-scikit-build-core@0.11:", type="build")
        depends_on("py-cython@3:", type="build")
        depends_on("py-mpi4py@3.1:", type=("build", "run"))
        depends_on("py-numpy@1.21:", type=("build", "run"))

    def cmake_args(self):
        mpi = self.spec["mpi"]
        args = [
            self.define("HS_LIBRARY_ONLY", True),
            self.define_from_variant("HS_ENABLE_FORTRAN", "fortran"),
            self.define_from_variant("HS_ENABLE_SHMEM", "shmem"),
            self.define("MPI_C_COMPILER", mpi.mpicc),
            # The library tells Open MPI from MPICH by its launcher (and records it).
            self.define("MPIEXEC_EXECUTABLE", join_path(mpi.prefix.bin, "mpiexec")),
        ]
        if self.spec.satisfies("+fortran"):
            args.append(self.define("MPI_Fortran_COMPILER", mpi.mpifc))
        if self.spec.satisfies("+shmem"):
            oshcc = join_path(mpi.prefix.bin, "oshcc")
            if not os.path.exists(oshcc):
                raise InstallError(
                    f"+shmem needs Open MPI built with OSHMEM: {oshcc} does not exist"
                )
            args.append(self.define("HS_OSHCC", oshcc))
        return args

    @run_after("install")
    def install_python(self):
        # The extension links the library just installed (HALOSWAP_ROOT) and mpi4py's MPI.
        if self.spec.satisfies("+python"):
            env["HALOSWAP_ROOT"] = self.prefix
            env["MPICC"] = self.spec["mpi"].mpicc
            with working_dir(self.stage.source_path):
                pip(*std_pip_args, f"--prefix={self.prefix}", ".")

    def setup_run_environment(self, env):
        # `spack load` puts a PythonPackage's site directory on PYTHONPATH; this is a
        # CMakePackage that extends python, so it says where pip put the package itself.
        if self.spec.satisfies("+python"):
            env.prepend_path("PYTHONPATH", join_path(self.prefix, self.spec["python"].package.platlib))
