#!/usr/bin/env python3
"""mkpprof: write a small pprof profile (profile.proto, by hand) for tests.

  mkpprof.py cpu OUT.pb.gz STACK=N...   a CPU profile as Go writes one
                                        (samples/count, cpu/nanoseconds, a
                                        10 ms period); STACK is root first,
                                        frames joined by ';' (main;b=100)
  mkpprof.py heap OUT.pb                a heap profile (alloc_space/bytes)
  mkpprof.py empty OUT.pb.gz N          a CPU profile of one sample and N
                                        empty Sample messages (2 bytes each)
  mkpprof.py inline OUT.pb.gz N         one sample at one location of N
                                        lines (an inline chain)
  mkpprof.py bigname OUT.pb.gz N        one sample in a function whose name
                                        is N bytes
  mkpprof.py maxcount OUT.pb.gz         three samples whose counts, in
                                        nanoseconds, each nearly fill an int64
"""
import gzip
import sys


def varint(n):
    out = b""
    while True:
        b = n & 0x7f
        n >>= 7
        out += bytes([b | (0x80 if n else 0)])
        if not n:
            return out


def field(num, wire, payload):
    if wire == 2:
        return varint(num << 3 | wire) + varint(len(payload)) + payload
    return varint(num << 3 | wire) + varint(payload)


def packed(num, vals):
    return field(num, 2, b"".join(varint(v) for v in vals))


def cpu(stacks, extra=b"", lines=1, name=None):
    strings = [b"", b"samples", b"count", b"cpu", b"nanoseconds"]

    def s(x):
        if x not in strings:
            strings.append(x)
        return strings.index(x)
    names = sorted({f for st, _ in stacks for f in st})
    msg = field(1, 2, field(1, 0, 1) + field(2, 0, 2)) + field(1, 2, field(1, 0, 3) + field(2, 0, 4))
    for st, n in stacks:
        leaf_first = [names.index(f) + 1 for f in reversed(st)]
        msg += field(2, 2, packed(1, leaf_first) + packed(2, [n, n * 10000000]))
    for i, f in enumerate(names):
        msg += field(4, 2, field(1, 0, i + 1) + field(4, 2, field(1, 0, i + 1)) * lines)
        msg += field(5, 2, field(1, 0, i + 1) + field(2, 0, s(name if name else f.encode())))
    msg += extra
    for x in strings:
        msg += field(6, 2, x)
    msg += field(11, 2, field(1, 0, 3) + field(2, 0, 4)) + field(12, 0, 10000000)
    return gzip.compress(msg)


def heap():
    strings = [b"", b"alloc_space", b"bytes", b"space"]
    msg = field(1, 2, field(1, 0, 1) + field(2, 0, 2))
    msg += field(2, 2, field(1, 2, varint(1)) + field(2, 2, varint(4096)))
    msg += field(4, 2, field(1, 0, 1))
    for x in strings:
        msg += field(6, 2, x)
    msg += field(11, 2, field(1, 0, 3) + field(2, 0, 2)) + field(12, 0, 524288)
    return msg


if __name__ == "__main__":
    kind, out = sys.argv[1], sys.argv[2]
    if kind == "cpu":
        stacks = []
        for arg in sys.argv[3:]:
            st, n = arg.rsplit("=", 1)
            stacks.append((st.split(";"), int(n)))
        data = cpu(stacks)
    elif kind == "empty":
        data = cpu([(["main"], 1)], extra=field(2, 2, b"") * int(sys.argv[3]))
    elif kind == "inline":
        data = cpu([(["main"], 1)], lines=int(sys.argv[3]))
    elif kind == "bigname":
        data = cpu([(["main"], 1)], name=b"f" * int(sys.argv[3]))
    elif kind == "maxcount":
        n = (2**63 - 1) // 10000000
        data = cpu([(["a"], n), (["b"], n), (["c"], n)])
    else:
        data = heap()
    with open(out, "wb") as f:
        f.write(data)
