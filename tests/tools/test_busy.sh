#!/bin/bash
# tools_busy: tools/busy.c keeps its promises (tests/tools/CMakeLists.txt). $1: the program.
busy=$1
fail=0
bad() { echo "FAIL: $*"; fail=1; }
# A loop is gone once its /proc entry is, or it is a zombie (dead, waiting to be reaped).
alive() { local s; s=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) && [ "$s" != Z ]; }
loops_of() { sed -n 's/^busy: [0-9]* busy loops\{0,1\} (pids \([0-9 ]*\)) beside.*/\1/p' "$1"; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT

# The command's exit status, and its loops running while it runs (R: on a CPU or runnable).
"$busy" -n 2 -- bash -c 'sleep 0.3; exit 3' 2>"$out"
rc=$?
[ $rc -eq 3 ] || bad "exit status $rc, want the command's 3"
pids=$(loops_of "$out")
[ "$(echo $pids | wc -w)" -eq 2 ] || bad "-n 2 started: '$pids' ($(cat "$out"))"
for p in $pids; do alive "$p" && bad "busy loop $p outlived busy"; done

"$busy" -n 2 -- bash -c 'sleep 0.5; for p in $(ps -o pid= --ppid $PPID); do
    [ "$p" != $$ ] && awk "{print \$3}" /proc/$p/stat; done' >"$out.ps" 2>"$out"
[ "$(grep -c '^R$' "$out.ps")" -eq 2 ] || bad "the loops were not running: $(cat "$out.ps")"
rm -f "$out.ps"

# A command killed by a signal: 128 + the signal, as a shell reports it.
"$busy" -n 1 -- bash -c 'kill -TERM $$' 2>"$out"
rc=$?
[ $rc -eq 143 ] || bad "command killed by SIGTERM: exit status $rc, want 143"
for p in $(loops_of "$out"); do alive "$p" && bad "busy loop $p outlived busy"; done

# busy itself killed with SIGKILL (nothing can clean up after it): its loops die with it.
( "$busy" -n 2 -- bash -c 'kill -KILL $PPID; sleep 2' 2>"$out"; true ) 2>/dev/null
sleep 0.5
pids=$(loops_of "$out")
[ -n "$pids" ] || bad "no loops reported: $(cat "$out")"
for p in $pids; do alive "$p" && bad "busy loop $p outlived a killed busy"; done

# A missing command: 127 and no loops left.
"$busy" -n 1 -- /nonexistent/command 2>"$out"
rc=$?
[ $rc -eq 127 ] || bad "missing command: exit status $rc, want 127"
for p in $(loops_of "$out"); do alive "$p" && bad "busy loop $p outlived busy"; done

# Bad arguments are refused, naming the value and the limit.
"$busy" -n -3 true 2>"$out" && bad "-n -3 accepted"
grep -q -- "-n -3: the number of busy loops must be 0 to" "$out" || bad "-n -3: $(cat "$out")"
"$busy" 2>/dev/null && bad "no command accepted"

[ $fail -eq 0 ] && echo "tools_busy: all checks passed"
exit $fail
