#!/bin/sh
# target_no_eintr_short: target_no_eintr in its second shape, 100 us of
# work then a 3 ms wait in every blocking call, where a thread read as
# running blocks just before csampler's interrupt lands (the race a ptrace
# sampler has): every mode and way out, no EINTR. A test of its own so that
# the two shapes run side by side (together they took 119 s, the quick
# group's longest).
NO_EINTR_SHAPE="100 3"
. "$TESTS_SRCDIR/integration/target_no_eintr.sh"
