"""A rank's exception or SIGINT inside the package's with blocks aborts the job, quickly, with
that rank's traceback (docs/python.md, "When a rank fails"). Runs abort_prog.py under mpiexec
on 3 ranks for each mode (the two jobs at once) and checks: the job ended non-zero within
LIMIT seconds of the raise or the signal (no hang in a collective free), and rank 1's
traceback is in its output.
Usage: abort_test.py VENV_PYTHON TRANSPORT MPIEXEC [mpiexec flags...]
Prints the seconds from the fault to the job's end per mode. Exit 77: skipped (no venv, or the
transport is not usable here)."""
import os
import signal
import subprocess
import sys
import tempfile
import time

LIMIT = 30.0  # seconds from the fault to the job's end
WAIT = 180.0  # seconds for both jobs (start-up on a loaded machine); CTest's timeout is 240
py, transport, mpiexec, *flags = sys.argv[1:]
prog = os.path.join(os.path.dirname(os.path.abspath(__file__)), "abort_prog.py")
if not os.access(py, os.X_OK) or subprocess.run([py, "-c", "import haloswap"],
                                                 capture_output=True).returncode:
    print(f"SKIP: no Python environment with haloswap at {py} (run: make python-<mpi>)")
    sys.exit(77)

MODES = ("raise", "sigint")
tmp = tempfile.TemporaryDirectory()
jobs = {}
for mode in MODES:  # both jobs at once: each mostly waits (start-up, the abort)
    pidfile, out = (os.path.join(tmp.name, f"{mode}.{x}") for x in ("rank1", "out"))
    with open(out, "w") as o:
        jobs[mode] = dict(pidfile=pidfile, out=out, fault=None, end=None, job=subprocess.Popen(
            [mpiexec, *flags, "-n", "3", py, prog, mode, transport, pidfile], stdout=o,
            stderr=subprocess.STDOUT, start_new_session=True))
start = time.monotonic()
while any(j["end"] is None for j in jobs.values()) and time.monotonic() - start < WAIT:
    for mode, j in jobs.items():
        if j["end"] is not None:
            continue
        if j["fault"] is None and os.path.exists(j["pidfile"]):
            pid, stamp = open(j["pidfile"]).read().split()
            if mode == "sigint":
                os.kill(int(pid), signal.SIGINT)
                j["fault"] = time.time()
            else:
                j["fault"] = float(stamp)
        if j["job"].poll() is not None:
            j["end"] = time.time()
    time.sleep(0.01)
for mode, j in jobs.items():
    job = j["job"]
    if job.poll() is None:
        j["end"] = time.time()
        os.killpg(job.pid, signal.SIGKILL)
        job.wait()
    if j["fault"] is None and mode == "raise" and os.path.exists(j["pidfile"]):
        j["fault"] = float(open(j["pidfile"]).read().split()[1])  # the job ended between polls
    j["text"] = open(j["out"], errors="replace").read()
tmp.cleanup()

failed = 0
for mode, j in jobs.items():
    job, text, fault, end = j["job"], j["text"], j["fault"], j["end"]
    if job.returncode == 77 and "SKIP" in text:
        print(text.strip())
        sys.exit(77)
    want = "RuntimeError: injected failure on rank 1" if mode == "raise" else "KeyboardInterrupt"
    took = end - fault if fault is not None else float("inf")
    problems = []
    if fault is None:
        problems.append("rank 1 never reached the fault")
    if job.returncode == 0:
        problems.append("the job ended with status 0")
    if took > LIMIT:
        problems.append(f"the job ended {took:.1f} s after the fault (limit {LIMIT:.0f} s)")
    for w in ("haloswap: rank 1:", "Traceback (most recent call last)", want):
        if w not in text:
            problems.append(f"{w!r} not in the job's output")
    print(f"{transport} {mode}: job ended with status {job.returncode}, {took:.2f} s after the "
          f"fault{'; ' + '; '.join(problems) if problems else ''}")
    if problems:
        failed += 1
        print(text[-4000:])
sys.exit(1 if failed else 0)
