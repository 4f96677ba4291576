#!/usr/bin/env python3
"""One version everywhere. The source is include/haloswap.h (HS_VERSION_MAJOR/MINOR/PATCH);
every other place that states the version must say the same:
  - hs_version() at run time (hs_info's first line) and the Fortran module's haloswap_version;
  - CMake's package (the build tree's haloswapConfigVersion.cmake, from project(VERSION));
  - every pkg-config file of the build tree (Version:);
  - python/pyproject.toml: its regex provider, applied to the file it names, gives the version
    (the sdist's name and the installed package's metadata come from it; the Python tests
    compare haloswap.__version__ with that metadata);
  - spack/packages/haloswap/package.py lists it as its newest version;
  - README.md and docs/*.md name the release tarball (haloswap-X.Y.Z.tar.gz) with it.
Usage: test_version.py SOURCE_DIR BUILD_DIR --hs-info HS_INFO [--fortran TEST_VERSION_F]"""
import argparse, glob, json, os, re, subprocess, sys

ap = argparse.ArgumentParser()
ap.add_argument("src")
ap.add_argument("build")
ap.add_argument("--hs-info", required=True)
ap.add_argument("--fortran")
a = ap.parse_args()
read = lambda *p: open(os.path.join(*p), encoding="utf-8").read()

header = read(a.src, "include", "haloswap.h")
parts = [re.search(rf"^#define HS_VERSION_{k} (\d+)$", header, re.M)
         for k in ("MAJOR", "MINOR", "PATCH")]
if not all(parts):
    sys.exit("FAIL: include/haloswap.h lacks a #define HS_VERSION_MAJOR/MINOR/PATCH line")
version = ".".join(m.group(1) for m in parts)
print(f"include/haloswap.h: {version}")
found, problems = {}, []


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    if r.returncode:
        sys.exit(f"FAIL: {' '.join(cmd)} exited {r.returncode}: {r.stderr}")
    return r.stdout


found["hs_version() (hs_info)"] = re.match(r"haloswap (\S+):", run([a.hs_info])).group(1)
if a.fortran:
    v, *nums = run([a.fortran]).split()
    found["haloswap_version (Fortran)"] = v
    found["haloswap_version's parts (Fortran)"] = ".".join(nums)

cfg = read(a.build, "haloswapConfigVersion.cmake")
found["haloswapConfigVersion.cmake"] = re.search(r'set\(PACKAGE_VERSION "([^"]*)"\)', cfg).group(1)
pcs = sorted(glob.glob(os.path.join(a.build, "*.pc")))
if not pcs:
    problems.append(f"no pkg-config file in {a.build}")
for pc in pcs:
    m = re.search(r"^Version: *(\S+)$", read(pc), re.M)
    found[os.path.basename(pc)] = m.group(1) if m else "(no Version line)"

# pyproject.toml: the [tool.scikit-build.metadata.version] table, its strings decoded as TOML
# basic strings (the escapes JSON shares), applied as scikit-build-core's regex provider does.
py_dir = os.path.join(a.src, "python")
table = re.search(r"^\[tool\.scikit-build\.metadata\.version\]\n(.*?)(?=^\[|\Z)",
                  read(py_dir, "pyproject.toml"), re.M | re.S)
if not table:
    problems.append("python/pyproject.toml has no [tool.scikit-build.metadata.version] table")
else:
    keys = {k: json.loads(v)
            for k, v in re.findall(r'^(\w+) = ("(?:[^"\\]|\\.)*")$', table.group(1), re.M)}
    if keys.get("provider") != "scikit_build_core.metadata.regex":
        problems.append(f"python/pyproject.toml: version provider is {keys.get('provider')}")
    else:
        m = re.search(keys["regex"], read(py_dir, keys["input"]), re.M)
        result = keys.get("result", "{value}")
        found[f"python/pyproject.toml ({keys['input']})"] = (
            result.format(*m.groups(), **m.groupdict()) if m else "(no match)")

spack_versions = re.findall(r'^\s*version\("([^"]+)"',
                            read(a.src, "spack", "packages", "haloswap", "package.py"), re.M)
numeric = [v for v in spack_versions if re.fullmatch(r"[\d.]+", v)]
found["spack package.py (newest version)"] = (
    max(numeric, key=lambda v: tuple(map(int, v.split(".")))) if numeric else "(none)")

docs = sorted(os.path.relpath(p, a.src) for p in glob.glob(os.path.join(a.src, "docs", "*.md")))
for doc in ["README.md"] + docs:
    for n, v in enumerate(re.findall(r"haloswap-(\d+\.\d+\.\d+)\.tar\.gz", read(a.src, doc))):
        found[f"{doc}: tarball name #{n + 1}"] = v

for where, v in found.items():
    ok = v == version
    print(f"{'ok  ' if ok else 'FAIL'} {where}: {v}")
    if not ok:
        problems.append(f"{where} says {v}, include/haloswap.h says {version}")
if problems:
    sys.exit("FAIL: " + "; ".join(problems))
print(f"version_agree: {len(found)} places say {version}")
