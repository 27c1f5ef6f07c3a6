# pyclock: one thread that calls two pure-Python functions of about 60 and
# 40 us of its own CPU in turn (work60, work40), reading the process's CPU
# clock after each (read_clock: time.process_time(), a system call that
# brings the scheduler's account of the thread up to date, so that on a
# busy host its slice often ends there), for SECONDS. Each call is timed
# with the thread's own CPU clock (time.thread_time_ns, the kernel's
# CLOCK_THREAD_CPUTIME_ID; those reads fall between the calls), and at the
# end it prints "cpu FUNCTION NANOSECONDS" for the three, and "ready PID"
# first. CPython 3.7 and later (thread_time_ns).
import os
import sys
import time


def spin(n):
    x = 0
    for i in range(n):
        x = (x * 31 + i) & 0xFFFF
    return x


def work60(n):
    return spin(n)


def work40(n):
    return spin(n)


def read_clock():
    return time.process_time()


def main():
    seconds = float(sys.argv[1])
    tt = time.thread_time_ns
    # steps of spin per microsecond of this thread's CPU
    t0 = tt()
    spin(200000)
    per_us = 200000.0 / max(1.0, (tt() - t0) / 1000.0)
    n60, n40 = max(1, int(60 * per_us)), max(1, int(40 * per_us))
    print("ready %d" % os.getpid())
    sys.stdout.flush()
    took = {"work60": 0, "work40": 0, "read_clock": 0}
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for _ in range(50):
            a = tt()
            work60(n60)
            b = tt()
            read_clock()
            c = tt()
            work40(n40)
            d = tt()
            read_clock()
            e = tt()
            took["work60"] += b - a
            took["read_clock"] += (c - b) + (e - d)
            took["work40"] += d - c
    for name in ("work60", "work40", "read_clock"):
        print("cpu %s %d" % (name, took[name]))


main()
