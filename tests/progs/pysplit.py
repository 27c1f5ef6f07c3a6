# pysplit: Python threads with a known split of CPU between Python
# functions, for checking csampler's Python frames against the
# interpreter's own accounting. Three threads run, for SECONDS, each its
# own mix of: py_arith (pure Python arithmetic), py_text (pure Python
# string work), c_json (json.dumps: a C extension that holds the GIL) and
# c_hash (hashlib's sha256 of 1 MiB: C that lets the GIL go). Each call
# is timed with the thread's own CPU clock (time.thread_time_ns, the
# kernel's CLOCK_THREAD_CPUTIME_ID); at the end it prints one line per
# function, "cpu FUNCTION NANOSECONDS", summed over the threads, then
# "process NANOSECONDS", the whole process's CPU until then (os.times:
# start-up, the loops' clock reads and the rest included).
# With "dump" instead of a number of seconds, each thread blocks at a
# known place and prints its traceback.format_stack() before it does, then
# "ready"; all block until standard input closes.
# It runs on every CPython from 2.7 on (the clocks and thread ids of the
# older ones through ctypes).
import ctypes
import hashlib
import json
import os
import sys
import threading
import time

LIBC = ctypes.CDLL(None, use_errno=True)
CLOCK_THREAD_CPUTIME_ID = 3
SYS_gettid = 186  # x86-64


class Timespec(ctypes.Structure):
    _fields_ = [("sec", ctypes.c_long), ("nsec", ctypes.c_long)]


def thread_ns():
    """This thread's CPU time (CLOCK_THREAD_CPUTIME_ID), in nanoseconds."""
    if hasattr(time, "thread_time_ns"):
        return time.thread_time_ns()
    ts = Timespec()
    LIBC.clock_gettime(CLOCK_THREAD_CPUTIME_ID, ctypes.byref(ts))
    return ts.sec * 1000000000 + ts.nsec


def native_id():
    if hasattr(threading, "get_native_id"):
        return threading.get_native_id()
    return LIBC.syscall(SYS_gettid)


monotonic = getattr(time, "monotonic", time.time)

DOC = {"items": [{"id": i, "name": "item-%d" % i, "tags": ["a", "b", "c"], "score": i * 0.5}
                 for i in range(200)]}
BLOB = os.urandom(1 << 20)


def py_arith(n):
    s = 0
    for i in range(n):
        s += (i * i) % 7
    return s


def py_text(n):
    out = []
    for i in range(n):
        out.append(("w%d" % i).upper())
    return ",".join(out)


def c_json():
    return len(json.dumps(DOC))


def c_hash():
    return hashlib.sha256(BLOB).digest()


MIXES = {
    "main": [(py_arith, (20000,), 3), (c_json, (), 1)],
    "alpha": [(py_text, (8000,), 2), (c_hash, (), 2)],
    "beta": [(py_arith, (20000,), 1), (c_json, (), 1), (c_hash, (), 1)],
}
totals = {}
lock = threading.Lock()


def run(name, seconds):
    mine = {}
    mix = MIXES[name]
    end = monotonic() + seconds
    while monotonic() < end:
        for fn, args, times in mix:
            for _ in range(times):
                t0 = thread_ns()
                fn(*args)
                mine[fn.__name__] = mine.get(fn.__name__, 0) + thread_ns() - t0
    with lock:
        for k, v in mine.items():
            totals[k] = totals.get(k, 0) + v


def report(name, stack):
    """Print STACK (traceback.format_stack's, taken on the line where the
    caller then blocks) as this thread's: its "File ..., line ..., in ..."
    lines, outermost first."""
    with lock:
        sys.stdout.write("stack %d %s\n" % (native_id(), name))
        for entry in stack:
            sys.stdout.write(entry.splitlines()[0] + "\n")
        sys.stdout.write("ready %d\n" % native_id())
        sys.stdout.flush()


def blocked_here(name, r):
    report(name, traceback.format_stack()); os.read(r, 1)


def nested_wait(name, r):
    blocked_here(name, r)


def dump_mode():
    r, w = os.pipe()
    threads = [threading.Thread(target=nested_wait, args=(n, r), name=n) for n in ("alpha", "beta")]
    for t in threads:
        t.start()

    def main_wait():
        report("main", traceback.format_stack()); sys.stdin.readline()
    main_wait()
    os.write(w, b"xx")
    for t in threads:
        t.join()


if sys.argv[1] == "dump":
    import traceback
    dump_mode()
    sys.exit(0)
seconds = float(sys.argv[1])
workers = [threading.Thread(target=run, args=(n, seconds), name=n) for n in ("alpha", "beta")]
for t in workers:
    t.start()
run("main", seconds)
for t in workers:
    t.join()
for k in sorted(totals):
    print("cpu %s %d" % (k, totals[k]))
used = os.times()
print("process %d" % int((used[0] + used[1]) * 1e9))
