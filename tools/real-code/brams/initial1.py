#!/usr/bin/env python3
"""The two edits BRAMS's horizontally homogeneous start (INITIAL=1) needs to run on more than
one rank, applied to a scratch copy of the user's checkout (never the checkout itself):

  initial1.py SRC_DIR      (SRC_DIR: the copy's src/brams)

1. init fix 1, model/ModOneProc.F90: INITIAL=1 is still in the source but stopped by a fatal
   message "initial==1 or initial==3 was not worked yet"; that one statement is removed.
2. init fix 2, init/rhhi.f90: inithh passes the global extents nxp, nyp to refs3d and flds3d
   for node-local arrays, and flds3d reads xm(i), yt(j), xt(i), ym(j) with local i, j: at more
   than one rank the initial state is corrupt. The local extents (mzp, mxp, myp) and offsets
   (i + i0, j + j0) are used instead; at one rank they are the same numbers.

Each edit must match the text exactly once, else the script stops and says which (a checkout
that differs from BRAMS-MODEL/brams bc9a102 here needs its own look)."""
import re
import sys


def edit(path, old, new, what, count=1):
    text = open(path).read()
    n = text.count(old)
    if n != count:
        sys.exit(f"initial1.py: {path}: expected {count} of {old!r} for {what}, found {n}")
    open(path, "w").write(text.replace(old, new))


def main():
    src = sys.argv[1]
    # 1. the fatal stop before the INITIAL=1 branch
    path = f"{src}/model/ModOneProc.F90"
    text = open(path).read()
    stop = re.compile(r"\n[ \t]*iErrNumber=dumpMessage\([^\n]*&\n[ \t]*\"\*\*\(JP\)\*\* "
                      r"initial==1 or initial==3 was not worked yet\"\)")
    if len(stop.findall(text)) != 1:
        sys.exit(f"initial1.py: {path}: the INITIAL=1 stop is not where expected")
    open(path, "w").write(stop.sub("", text))
    # 2. local extents and offsets in rhhi.f90
    path = f"{src}/init/rhhi.f90"
    edit(path, "use mem_grid\n\nimplicit none\n\ninteger :: ifm,icm",
         "use mem_grid\nuse node_mod, only: mxp, myp, mzp\n\nimplicit none\n\ninteger :: ifm,icm",
         "inithh's local extents")
    edit(path, "call refs3d(nzp,nxp,nyp", "call refs3d(mzp,mxp,myp", "refs3d's extents")
    edit(path, "call flds3d(nzp,nxp,nyp", "call flds3d(mzp,mxp,myp", "flds3d's extents")
    edit(path, ",topt,topu,topv,rtgt,rtgu,rtgv)\n\nuse mem_grid\n",
         ",topt,topu,topv,rtgt,rtgu,rtgv)\n\nuse mem_grid\nuse node_mod, only: i0, j0\n",
         "flds3d's offsets")
    edit(path, "do j=1,nyp\n   do i=1,nxp\n\n      do k=1,nzp\n         vctr11(k)",
         "do j=1,n3\n   do i=1,n2\n\n      do k=1,nzp\n         vctr11(k)", "flds3d's loops")
    # (flds3d_adap, for the adaptive-height grid, is left alone: the case does not use it)
    edit(path, "&\n            ,xm(i),yt(j))", "&\n            ,xm(i+i0),yt(j+j0))",
         "flds3d's u position")
    edit(path, "&\n            ,xt(i),ym(j))", "&\n            ,xt(i+i0),ym(j+j0))",
         "flds3d's v position")


main()
