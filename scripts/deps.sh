#!/bin/sh
# Installs the Debian packages the build (and, with "test", the test suite; with
# "bench", the suite and the benchmarks) needs, only when one is missing. Safe to run
# again; does nothing when all are present. "verify" installs nothing: it names the
# build's missing packages and fails (a plain make, before a compiler error would).
set -eu
want=test
case "${1:-}" in build | bench | verify) want=$1 ;; esac

missing=""
need_pkg() {	# need_pkg DEBIAN-PACKAGE CHECK-COMMAND...
	pkg=$1; shift
	"$@" >/dev/null 2>&1 || missing="$missing $pkg"
}
need_pkg gcc command -v cc
need_pkg make command -v make
need_pkg pkg-config command -v pkg-config
need_pkg libsqlite3-dev pkg-config --exists sqlite3
need_pkg libmicrohttpd-dev pkg-config --exists libmicrohttpd
if [ "$want" != verify ]; then
	# the eBPF peak engine (optional at build time: without them rsswatch builds
	# without it, and says so): clang compiles the program, bpftool makes its
	# skeleton, libbpf loads it (linked statically, with libelf and zlib)
	need_pkg clang command -v clang
	need_pkg bpftool sh -c 'command -v bpftool || test -x /usr/sbin/bpftool'
	need_pkg libbpf-dev pkg-config --exists libbpf
	need_pkg libelf-dev pkg-config --exists libelf
	need_pkg zlib1g-dev pkg-config --exists zlib
	# record --stacks: libdw walks and names the stacks (linked statically, with
	# libbz2 and liblzma shared), libiberty demangles C++ and Rust names
	need_pkg libdw-dev pkg-config --exists libdw
	need_pkg libbz2-dev test -e /usr/include/bzlib.h
	need_pkg libiberty-dev test -e /usr/include/libiberty/demangle.h
fi
if [ "$want" != build ] && [ "$want" != verify ]; then
	need_pkg libcmocka-dev pkg-config --exists cmocka
	need_pkg sqlite3 command -v sqlite3
	need_pkg chromium command -v chromium
	# PNG output (optional at build time; about 40 small packages, under 30 s)
	need_pkg librsvg2-dev pkg-config --exists librsvg-2.0 cairo
	need_pkg sudo command -v sudo
	# real programs measured beside /usr/bin/time (t18-real)
	need_pkg time test -x /usr/bin/time
	need_pkg stress-ng command -v stress-ng
	need_pkg python3 command -v python3
	# a real Prometheus server and promtool, and an HTTP client (t39, t73); the
	# package is about 19 MB, with a dozen small JavaScript packages
	need_pkg prometheus command -v promtool
	need_pkg curl command -v curl
	# record --stacks held against programs in C++ and in Rust (t85)
	need_pkg g++ command -v g++
	need_pkg rustc test -x /usr/bin/rustc
	# the Rust crate, bindings/rust, built offline (it has no dependencies) (t89)
	need_pkg cargo test -x /usr/bin/cargo
	# the Python package (t90): its tests under pytest, the frames of its readers,
	# and a real pip install into a venv
	need_pkg python3-pytest /usr/bin/python3 -c 'import pytest'
	need_pkg python3-pandas /usr/bin/python3 -c 'import pandas'
	need_pkg python3-pip /usr/bin/python3 -m pip --version
	need_pkg python3-venv /usr/bin/python3 -c 'import ensurepip'
	need_pkg python3-setuptools /usr/bin/python3 -c 'import setuptools'
	# the shell completions (t92): zsh's script is parsed by zsh -n
	need_pkg zsh command -v zsh
	# record --stacks=malloc in a program on another allocator (t93)
	need_pkg libjemalloc2 test -e /usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)/libjemalloc.so.2
	# the Debian packages (make deb, t91): built, checked by lintian, unpacked;
	# dpkg-buildpackage asks for build-essential besides debian/control's list
	need_pkg build-essential sh -c \
		"dpkg-query -W -f '\${Status}' build-essential | grep -q 'ok installed'"
	need_pkg dpkg-dev command -v dpkg-buildpackage
	need_pkg debhelper command -v dh
	need_pkg lintian command -v lintian
	need_pkg fakeroot command -v fakeroot
fi
if [ "$want" = bench ]; then
	# the peers of bench/run.sh (make bench) and bench/peaks.sh
	need_pkg sysstat command -v pidstat
	need_pkg python3-psutil /usr/bin/python3 -c 'import psutil'
	need_pkg procps command -v ps
	# bench/stacks-cost.sh: record --stacks beside heaptrack, and strace's call counts
	need_pkg heaptrack command -v heaptrack
	need_pkg strace command -v strace
fi
[ -z "$missing" ] && exit 0
if [ "$want" = verify ]; then
	echo "rsswatch: cannot build: missing Debian packages:$missing (make deps-build installs" \
		"them as root; or apt-get install$missing)" >&2
	exit 1
fi

if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
	echo "rsswatch: missing build dependencies:$missing (install them with apt-get as root)" >&2
	exit 1
fi
echo "installing:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null || apt-get update
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
