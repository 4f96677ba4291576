"""What the tools' doc checks (check_real_code.py, check_peer_bench.py) share: a tally of
checks and problems, and a tool run from the source tree with its output captured."""
import os
import subprocess


class Tally:
    def __init__(self):
        self.problems, self.checked = [], 0

    def expect(self, cond, what):
        self.checked += 1
        if not cond:
            self.problems.append(what)


def run_in(src, args, env_extra=None, shell=False, timeout=120):
    """(exit status, stdout, stderr) of args run in src, temporary files in /tmp."""
    env = dict(os.environ, TMPDIR="/tmp", **(env_extra or {}))
    r = subprocess.run(args, cwd=src, env=env, shell=shell, capture_output=True, text=True,
                       timeout=timeout)
    return r.returncode, r.stdout, r.stderr


class ToolCheck(Tally):
    """A tally of the checks of tools/NAME in the source tree src, which run runs in."""

    def __init__(self, name, src):
        super().__init__()
        self.src = os.path.abspath(src)
        self.tool = os.path.join(self.src, "tools", name)

    def run(self, args, env_extra=None, shell=False):
        return run_in(self.src, args, env_extra, shell)
