#!/bin/sh
# Regenerate the build system from configure.ac and the Makefile.am files.
set -e
cd "$(dirname "$0")"
mkdir -p m4
exec autoreconf -fi
