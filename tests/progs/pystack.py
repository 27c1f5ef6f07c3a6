# pystack: Python threads blocked at known frames, for checking csampler's
# reading of CPython's frame chains (pyframes). Each thread prints its own
# frames as the interpreter has them (qualified name, file, line; innermost
# first, from sys._getframe) on the line where it then blocks, then
# "ready TID"; both block until standard input closes.
import os
import sys
import threading


def emit(tid):
    f = sys._getframe(1)
    lines = []
    while f is not None:
        lines.append("frame %d %s|%s|%d" % (tid, f.f_code.co_qualname, f.f_code.co_filename,
                                             f.f_lineno))
        f = f.f_back
    sys.stdout.write("\n".join(lines) + "\nready %d\n" % tid)
    sys.stdout.flush()


class Worker:
    def block(self, r):
        emit(threading.get_native_id()); os.read(r, 1)


def inner():
    emit(threading.get_native_id()); sys.stdin.readline()


def middle():
    inner()


def outer():
    middle()


r, w = os.pipe()
t = threading.Thread(target=Worker().block, args=(r,), name="worker", daemon=True)
t.start()
outer()
os.write(w, b"x")
t.join()
