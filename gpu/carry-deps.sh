#!/bin/sh
# gpu/carry-deps.sh - the development files a GPU host may lack, packed
# to be carried there.
#
# Building flashstep needs the ncurses and check development files; a GPU
# host that cannot install packages often has everything else (nvcc, a C
# compiler, make, autoconf, automake, pkg-config).  Run this from the top
# of the tree on a Debian or Ubuntu machine of the same architecture that
# can reach its package archive.  It downloads the packages (installing
# nothing) into .gpu-deps/, which git ignores, and writes .gpu-deps/env.sh.
# Copy the tree with .gpu-deps/ to the GPU host, and there, from the top
# of the tree:
#
#     . .gpu-deps/env.sh && ./bootstrap && FLASHSTEP_REQUIRE_GPU=1 make check
#
# env.sh unpacks the packages under $FLASHSTEP_DEPS (/tmp/flashstep-deps
# unless set; never into /) and points pkg-config, the compiler, the
# linker and the loader at them, so bootstrap finds them and installs
# nothing.
set -eu
cd "$(dirname "$0")/.."
packages="libncurses-dev check libsubunit-dev libsubunit0"
mkdir -p .gpu-deps
cd .gpu-deps
# apt-get download needs the package lists; a fresh machine has none.
if [ -z "$(ls /var/lib/apt/lists 2>/dev/null | grep -v '^lock$\|^partial$')" ]; then
  apt-get update -q
fi
apt-get download $packages
cat >env.sh <<'EOT'
# Sourced on the GPU host from the top of the tree: . .gpu-deps/env.sh
flashstep_deps=${FLASHSTEP_DEPS:-/tmp/flashstep-deps}
mkdir -p "$flashstep_deps"
for deb in .gpu-deps/*.deb; do dpkg-deb -x "$deb" "$flashstep_deps"; done
flashstep_lib=$flashstep_deps/usr/lib/$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
export PKG_CONFIG_PATH="$flashstep_lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
export PKG_CONFIG_SYSROOT_DIR="$flashstep_deps"
export CPPFLAGS="-I$flashstep_deps/usr/include ${CPPFLAGS:-}"
export LDFLAGS="-L$flashstep_lib ${LDFLAGS:-}"
export LD_LIBRARY_PATH="$flashstep_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# The carried ncurses looks for terminal descriptions where Debian keeps them.
export TERMINFO_DIRS=/usr/share/terminfo:/lib/terminfo
EOT
echo "carry-deps: $(ls *.deb | wc -l) packages and env.sh in $(pwd)"
