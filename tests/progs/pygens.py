# pygens: Python frames that generators and coroutines run, for checking
# that csampler puts each where the interpreter runs it: a generator's
# frame is resumed by the loop of its consumer (a C call in between:
# sum), a coroutine's by send, each in a call of the evaluation loop of
# its own. For SECONDS it runs consume() (sum over produce(), a generator
# whose every item is work()) and drive() (a coroutine, coro_outer,
# awaiting nothing and calling coro_inner, which calls work()). Every
# sample in work() has, from <module> down, either consume, produce, work
# or drive, coro_outer, coro_inner, work. Runs on 2.7 (no coroutine
# there) and every 3.x.
import sys
import time


def work(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def produce(k):
    for i in range(k):
        yield work(2000)


def consume():
    return sum(produce(50))


def coro_inner():
    s = 0
    for _ in range(25):
        s += work(2000)
    return s


if sys.version_info >= (3, 5):
    exec("async def coro_outer():\n    return coro_inner()\n")

    def drive():
        c = coro_outer()
        try:
            c.send(None)
        except StopIteration as e:
            return e.value
else:
    def drive():
        return 0

end = time.time() + float(sys.argv[1])
while time.time() < end:
    consume()
    drive()
