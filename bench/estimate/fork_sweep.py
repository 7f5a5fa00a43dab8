"""Bench only (bench/sweep.sh): the fast capture of each sweep value in a child forked after
`import torch`, the prototype of docs/estimate.md's design ("What a sweep costs"), kept to
compare the built one (xmem_fast/zygote.py) with. Not the product: no launcher around the
children (no limits, no status pipe, no timeout).

    PYTHONPATH=FAST_PYDIR XMEM_EXACT_PYDIR=... XMEM_STEPS=N XMEM_THREADS=T \
        python fork_sweep.py OUTDIR ARG V1,V2,... SCRIPT ARGS...

Writes OUTDIR/V.xtrace per value and prints one line per value with its seconds from fork
to exit, then the import's seconds. Exits 1 if a thread exists at fork time (the hazard).
"""
import os
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # numpy's OpenBLAS starts threads at load
t0 = time.time()
import torch  # noqa: E402,F401  (the point: once, before the forks)
from xmem_fast import arm  # noqa: E402

imported = time.time() - t0


def with_value(args, arg, value):
    out, done, i = [], False, 0
    while i < len(args):
        if args[i] == arg and i + 1 < len(args):
            out += [arg, value]
            i, done = i + 2, True
            continue
        if args[i].startswith(arg + "="):
            out.append(f"{arg}={value}")
            done = True
        else:
            out.append(args[i])
        i += 1
    return out if done else out + [f"{arg}={value}"]


def main():
    outdir, arg, values, script, args = sys.argv[1], sys.argv[2], sys.argv[3].split(","), \
        sys.argv[4], sys.argv[5:]
    threads = len(os.listdir("/proc/self/task"))
    if threads != 1:
        print(f"fork_sweep: {threads} threads after the import; a fork would copy one")
        return 1
    import runpy
    for value in values:
        start = time.time()
        pid = os.fork()
        if pid == 0:
            os.environ["XMEM_TRACE_OUT"] = os.path.join(outdir, value + ".xtrace")
            sys.argv = [script] + with_value(args, arg, value)
            sys.path[0] = os.path.dirname(os.path.abspath(script))
            arm.arm()
            runpy.run_path(script, run_name="__main__")
            sys.exit(0)
        _, status = os.waitpid(pid, 0)
        print(f"value {value}: {time.time() - start:.2f} s, exit status {status >> 8}", flush=True)
    print(f"import {imported:.2f} s, once")
    return 0


if __name__ == "__main__":
    sys.exit(main())
