#!/usr/bin/env python3
"""Keeps tools/check-real-code and the docs that teach it true to each other, without any
real code's checkout (--list reads none):
  - every option of `tools/check-real-code --help` is in docs/real-codes.md's option table,
    and every option of that table is in --help;
  - `--list` runs for every code (tools/real-code/CODE.sh) and ends with its estimate;
  - every `tools/check-real-code ...` command in a sh block of README.md and docs/*.md runs
    with --list added (its options are valid for its code), and a block that starts with
    `$ tools/check-real-code ... --list` prints exactly the output the block shows;
  - bad options stop it with exit status 2 and a message naming the value.
Usage: check_real_code.py SOURCE_DIR"""
import concurrent.futures
import glob
import os
import re
import subprocess
import sys

src = os.path.abspath(sys.argv[1])
tool = os.path.join(src, "tools", "check-real-code")
problems, checked = [], 0


def run(args, env_extra=None, shell=False):
    env = dict(os.environ, TMPDIR="/tmp", **(env_extra or {}))
    r = subprocess.run(args, cwd=src, env=env, shell=shell, capture_output=True, text=True,
                       timeout=120)
    return r.returncode, r.stdout, r.stderr


def expect(cond, what):
    global checked
    checked += 1
    if not cond:
        problems.append(what)


# --help against docs/real-codes.md's option table
rc, out, err = run([tool, "--help"])
expect(rc == 0, f"--help exits {rc}: {err}")
help_opts = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]+)", out))
doc = open(os.path.join(src, "docs", "real-codes.md"), encoding="utf-8").read()
table_opts = set(re.findall(r"^\| `(--[a-z-]+)", doc, flags=re.M))
for o in sorted(help_opts - table_opts):
    expect(False, f"--help names {o}, docs/real-codes.md's option table does not")
for o in sorted(table_opts - help_opts):
    expect(False, f"docs/real-codes.md's option table names {o}, --help does not")

# --list for every code, no checkout
codes = sorted(os.path.basename(p)[:-3] for p in glob.glob(os.path.join(src, "tools", "real-code", "*.sh"))
               if os.path.basename(p) not in ("common.sh", "sdf.sh"))
expect(len(codes) >= 5, f"codes found: {codes}")
for code in codes:
    rc, out, err = run([tool, code, "--list", "--transports", "p2p shm"])
    expect(rc == 0 and re.search(r"^total: \d+ builds, \d+ runs, about \d+ min", out, flags=re.M),
           f"{code} --list: exit {rc}\n{out}{err}")


def sh_blocks(path):
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        m = re.match(r"^(\s*)```\s*(sh|bash|)\s*$", lines[i])
        if not m:
            i += 1
            continue
        j = i + 1
        while j < len(lines) and not re.match(r"^\s*```\s*$", lines[j]):
            j += 1
        ind = len(m.group(1))  # a fence's indentation (a list item's) is not the block's
        yield i + 2, [l[ind:].rstrip() for l in lines[i + 1:j]]
        i = j + 1


# the commands of the docs, dry-run with --list; shown --list outputs compared
files = [os.path.join(src, "README.md")] + sorted(glob.glob(os.path.join(src, "docs", "*.md")))
ncmd, dry = 0, []
for path in files:
    rel = os.path.relpath(path, src)
    for line, block in sh_blocks(path):
        if block and block[0].startswith("$ tools/check-real-code") and "--list" in block[0]:
            rc, out, err = run(block[0][2:], shell=True)
            shown = "\n".join(block[1:]).strip()
            expect(rc == 0 and out.strip() == shown,
                   f"{rel}:{line}: `{block[0][2:]}` prints\n{out}{err}\nnot what the docs show:\n{shown}")
            ncmd += 1
            continue
        k = 0
        while k < len(block):
            cmd = block[k].strip()
            while cmd.endswith("\\") and k + 1 < len(block):
                k += 1
                cmd = cmd[:-1] + " " + block[k].strip()
            k += 1
            cmd = re.sub(r"\s+#.*$", "", cmd).strip()
            # synopsis lines ([...], <checkout>, CODE, CHECKOUT) are not commands
            if "tools/check-real-code " not in cmd or re.search(r"[\[<]|\bCODE\b|CHECKOUT|\.\.\.|--help", cmd):
                continue
            if not re.match(r"^([A-Z_]+=\S+\s+)*tools/check-real-code\s", cmd):
                continue
            ncmd += 1
            dry.append((f"{rel}:{line}", cmd + " --list"))
# concurrently: most of the time is hs_info starting MPI to list the usable transports
with concurrent.futures.ThreadPoolExecutor(4) as pool:
    for (where, cmd), (rc, out, err) in zip(dry, pool.map(lambda w: run(w[1], shell=True), dry)):
        expect(rc == 0 and "total:" in out, f"{where}: `{cmd}` exits {rc}\n{out}{err}")
expect(ncmd >= 10, f"only {ncmd} documented check-real-code commands found")

# bad options: exit 2, a message naming the value
for args, needle in [
        (["lare3d", "--list", "--layout", "1 2"], "'1 2'"),
        (["lare3d", "--list", "--layout", "1 2 2", "--ranks", "2"], "needs 4 ranks"),
        (["lare3d", "--list", "--tests-only"], "--tests-only"),
        (["lare3d", "--list", "--input", "control.f90", "--size", "48"], "--size"),
        (["epic", "--list", "--layout", "1 1 1"], "--layout '1 1 1'"),
        (["epic", "--list", "--input", "a.config"], "field file"),
        (["epoch", "--list", "--input", "a.deck", "--input", "b.deck"], "one deck"),
        (["parcel-clustering", "--list", "--size", "16 16"], "'16 16'"),
        (["monc", "--list", "--steps", "5"], "--steps '5'"),
        (["lare3d", "--ranks", "0", "--list"], "'0'"),
        (["lare3d"], "CHECKOUT missing"),
        (["nosuchcode", "x"], "unknown code 'nosuchcode'"),
        (["lare3d", "/nonexistent/dir"], "'/nonexistent/dir' is not a directory")]:
    rc, out, err = run([tool] + args)
    expect(rc == 2 and needle in err, f"{' '.join(args)}: exit {rc}, stderr without {needle!r}:\n{err}")

for p in problems:
    print("PROBLEM:", p)
print(f"check-real-code and its docs: {checked} checks, {ncmd} documented commands run with --list, "
      f"{len(problems)} problems")
sys.exit(1 if problems else 0)
