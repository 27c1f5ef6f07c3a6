"""pythreads: THREADS Python threads started together, each spinning on its
own CPU clock (time.thread_time_ns) for MS milliseconds of CPU in a Python
function of its own (spin), then joined.

usage: pythreads.py THREADS MS

Every thread's state is made by the main thread as it starts that thread,
and names its thread only once the thread runs (CPython's t_bootstrap): a
profiler that stops a new thread in between finds no state for it yet.
Prints "done THREADS" at the end."""
import sys
import threading
import time


def spin(ns):
    start = time.thread_time_ns()
    while time.thread_time_ns() - start < ns:
        pass


def main():
    n, ms = int(sys.argv[1]), int(sys.argv[2])
    threads = [threading.Thread(target=spin, args=(ms * 1000000,)) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print("done", n, flush=True)


main()
