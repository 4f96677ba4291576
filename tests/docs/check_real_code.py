#!/usr/bin/env python3
"""Keeps tools/check-real-code and the docs that teach it true to each other, without any
real code's checkout (--list reads none):
  - every option of `tools/check-real-code --help` is in docs/real-codes.md's option table,
    and every option of that table is in --help;
  - `--list` runs for every code (tools/real-code/CODE.sh) and ends with its estimate;
  - every `tools/check-real-code ...` command in a sh block of README.md and docs/*.md runs
    with --list added (its options are valid for its code), and a block that starts with
    `$ tools/check-real-code ... --list` prints exactly the output the block shows;
  - the Debian packages --list names for a code are those its page's apt-get command installs;
  - docs/epoch.md's fetch of EPOCH and SDF/FORTRAN works from a mirror of local repositories
    (where the relative submodule URLs do not resolve) and fetches no other part of SDF;
  - bad options stop it with exit status 2 and a message naming the value.
Usage: check_real_code.py SOURCE_DIR"""
import concurrent.futures
import glob
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tally import ToolCheck  # noqa: E402
import tempfile

tally = ToolCheck("check-real-code", sys.argv[1])
src, tool, run, expect, problems = tally.src, tally.tool, tally.run, tally.expect, tally.problems


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
    # parcel-clustering's --transports are the remote-access back ends
    trs = "p2p rma" if code == "parcel-clustering" else "p2p shm"
    rc, out, err = run([tool, code, "--list", "--transports", trs])
    expect(rc == 0 and re.search(r"^total: \d+ builds, \d+ runs, about \d+ min", out, flags=re.M),
           f"{code} --list: exit {rc}\n{out}{err}")
# an unknown back end stops parcel-clustering's check up front, naming the back ends
rc, out, err = run([tool, "parcel-clustering", "--list", "--transports", "p2p shm"])
expect(rc == 2 and "back ends: p2p rma rma-epoch shmem" in err,
       f"parcel-clustering --transports shm: exit {rc}\n{out}{err}")


def sh_blocks(path):
    return sh_blocks_of(open(path, encoding="utf-8").read())


def sh_blocks_of(text):
    lines = text.split("\n")
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


def joined(block):
    """A block's commands, continuation lines joined, comments dropped."""
    cmds, cur = [], ""
    for l in block:
        cur += l.strip()
        if cur.endswith("\\"):
            cur = cur[:-1] + " "
            continue
        cur = re.sub(r"(^|\s+)#.*$", "", cur).strip()
        if cur:
            cmds.append(cur)
        cur = ""
    return cmds


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

# The Debian packages: what `--list` says a code's check installs is what the apt-get command
# of the code's page ("Check it on your own case") installs.
for code in codes:
    rc, out, err = run([tool, code, "--list", "--transports", "p2p"])
    m = re.search(r"^Debian packages [^:]*: (.*)$", out, flags=re.M)
    if not m:
        continue
    page = os.path.join(src, "docs", f"{code}.md")
    text = open(page, encoding="utf-8").read() if os.path.exists(page) else ""
    sec = text.split("## Check it on your own case", 1)[-1].split("\n## ", 1)[0] if text else ""
    cmds = [c for _, b in sh_blocks_of(sec) for c in joined(b) if "apt-get install" in c]
    got = set()
    for c in cmds:
        got |= {w for w in c.split("apt-get install", 1)[1].split() if not w.startswith("-")}
    expect(cmds and got == set(m.group(1).split()),
           f"docs/{code}.md's apt-get install names {sorted(got)}; the check installs {m.group(1)}")


# EPOCH's fetch from a mirror (docs/epoch.md, step 2), run against a mirror of local
# repositories where GitHub's relative submodule URLs do not resolve (epoch names SDF as
# ../SDF.git, SDF names FORTRAN and C the same way; the mirror keeps OWNER+NAME/repo). The
# steps must give SDF/FORTRAN and leave SDF's other parts unfetched.
def git(*args, cwd):
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main",
                    "-c", "protocol.file.allow=always"] + list(args),
                   cwd=cwd, check=True, capture_output=True, timeout=60)


def repo(path, files, subs=()):
    os.makedirs(path)
    git("init", "-q", cwd=path)
    for name, text in files.items():
        open(os.path.join(path, name), "w").write(text)
    if subs:
        open(os.path.join(path, ".gitmodules"), "w").write("".join(
            f'[submodule "{p}"]\n\tpath = {p}\n\turl = ../{u}.git\n' for p, u, _ in subs))
    git("add", "-A", cwd=path)
    for p, _, sha in subs:   # the submodule's commit, as GitHub's repository records it
        git("update-index", "--add", "--cacheinfo", f"160000,{sha},{p}", cwd=path)
    git("commit", "-q", "-m", "x", cwd=path)
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=path, capture_output=True, text=True).stdout.strip()


fetch = [b for _, b in sh_blocks(os.path.join(src, "docs", "epoch.md")) if any("submodule init SDF" in l for l in b)]
expect(len(fetch) == 1, "docs/epoch.md: no (or several) blocks with EPOCH's submodule steps")
if fetch and shutil.which("git"):
    with tempfile.TemporaryDirectory() as tmp:
        m = os.path.join(tmp, "mirror", "Warwick-Plasma+{}", "repo")
        f = repo(m.format("SDF_FORTRAN"), {"Makefile": "all:\n"})
        c = repo(m.format("SDF_C"), {"Makefile": "all:\n"})
        d = repo(m.format("SDF"), {"README": "sdf\n"}, [("FORTRAN", "SDF_FORTRAN", f), ("C", "SDF_C", c)])
        repo(m.format("epoch"), {"README.md": "epoch\n"}, [("SDF", "SDF", d)])
        urls = {"EPOCH_URL": "epoch", "SDF_URL": "SDF", "SDF_FORTRAN_URL": "SDF_FORTRAN"}
        script = "\n".join(f"{l.split('=')[0]}={m.format(urls[l.split('=')[0]])}" if l.split("=")[0] in urls
                           else l for l in joined(fetch[0]))
        work = os.path.join(tmp, "work")
        os.makedirs(work)
        r = subprocess.run(["bash", "-e", "-c", script], cwd=work, capture_output=True, text=True, timeout=120,
                           env=dict(os.environ, GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_NOSYSTEM="1"))
        e = os.path.join(work, "epoch")
        expect(r.returncode == 0 and os.path.exists(os.path.join(e, "SDF", "FORTRAN", "Makefile"))
               and not os.listdir(os.path.join(e, "SDF", "C")),
               f"docs/epoch.md's fetch steps from a mirror (exit {r.returncode}): {r.stderr}"
               f"{sorted(os.listdir(e)) if os.path.isdir(e) else 'no epoch/'}")
        ncmd += 1

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
        (["brams", "--list", "--dyncore", "rk4"], "--dyncore 'rk4'"),
        (["epoch", "--list", "--dyncore", "rk3"], "--dyncore 'rk3'"),
        (["brams", "--list", "--sensitivity", "a b"], "--sensitivity 'a b'"),
        (["lare3d", "--list", "--sensitivity", "AcouRecvU"], "--sensitivity 'AcouRecvU'"),
        (["brams", "--list", "--bench", "1", "--steps", "1"], "--steps '1' with --bench"),
        (["lare3d", "--ranks", "0", "--list"], "'0'"),
        (["lare3d"], "CHECKOUT missing"),
        (["nosuchcode", "x"], "unknown code 'nosuchcode'"),
        (["lare3d", "/nonexistent/dir"], "'/nonexistent/dir' is not a directory")]:
    rc, out, err = run([tool] + args)
    expect(rc == 2 and needle in err, f"{' '.join(args)}: exit {rc}, stderr without {needle!r}:\n{err}")

for p in problems:
    print("PROBLEM:", p)
print(f"check-real-code and its docs: {tally.checked} checks, {ncmd} documented commands run with --list, "
      f"{len(problems)} problems")
sys.exit(1 if problems else 0)
