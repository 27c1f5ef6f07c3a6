# pycodechurn: Python code objects made and freed without end, for checking
# that csampler names each sampled frame by the code object it ran, not by
# one freed before at the same address (CPython's allocator gives a freed
# code object's memory to the next one soon). For SECONDS of its own CPU
# time (a loaded machine then samples as many), it compiles a function gen_N from text, with N % 50 empty lines before it, in a file
# named "<gen_N>", runs it, and drops it: gen_N's lines are N % 50 + 1 to
# N % 50 + 5, its file "<gen_N>". Prints "made N" at the end.
import sys
import time

end = time.process_time() + float(sys.argv[1])
n = 0
while time.process_time() < end:
    src = "\n" * (n % 50) + ("def gen_%d(k):\n    s = 0\n    for i in range(k):\n        s += i\n"
                             "    return s\n") % n
    ns = {}
    exec(compile(src, "<gen_%d>" % n, "exec"), ns)
    ns["gen_%d" % n](20000)
    del ns
    n += 1
print("made %d" % n)
