# pynames: Python functions with names csampler must read and write
# safely. Their code objects name them in the three kinds of str CPython
# has (1 byte a character: ASCII and Latin-1; 2 bytes: Cyrillic, CJK;
# 4 bytes: beyond the BMP), and one (a code object made with replace) has
# a qualified name and file name with the separators and markup of every
# output format: ; newline < & " and a control character. The innermost
# function loops for SECONDS of the process's CPU time (not wall time: on
# a loaded host the interpreter's start-up took half the samples).
import sys
import time


def привет_мир(n):
    s = 0
    for i in range(n):
        s += i
    return s


def 函数(n):
    return привет_мир(n)


def latin_é(n):
    return 函数(n)


def wide(n):
    return latin_é(n)


def plain(n):
    return wide(n)


# (before 3.11 a code object has no qualified name: the name is its
# co_name, which csampler reads there; code.replace is 3.8's)
name_field = "co_qualname" if sys.version_info >= (3, 11) else "co_name"
wide.__code__ = wide.__code__.replace(**{name_field: "wide_\U0001F600"})
plain.__code__ = plain.__code__.replace(**{name_field: "evil;name\n<script>&\"x\x01",
                                           "co_filename": "/tmp/a;b\nc.py"})
end = time.process_time() + float(sys.argv[1])
while time.process_time() < end:
    plain(100000)
