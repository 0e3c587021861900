#!/bin/bash -eu
# ClusterFuzzLite's build: the lab's own OSS-Fuzz build (the builder sets CC, CXX, CFLAGS, CXXFLAGS,
# LIB_FUZZING_ENGINE and OUT). One script for both: fuzz/oss-fuzz/build.sh.
PYTHON=python3 exec "$SRC/tlslab/fuzz/oss-fuzz/build.sh"
