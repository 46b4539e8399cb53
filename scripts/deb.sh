#!/bin/sh
# make deb: the Debian packages (debian/) built from a copy of the source tree, so that
# dpkg-buildpackage, which writes its results beside the tree it builds, writes nothing
# into this one or its parent. scripts/deb.sh OUTDIR: the .debs, .buildinfo and
# .changes land in OUTDIR (emptied first). The build is the same whatever the caller's
# make variables (BUILD, SANITIZE, CFLAGS: debian/rules names its own).
set -eu
[ $# -eq 1 ] || { echo "usage: scripts/deb.sh OUTDIR" >&2; exit 2; }
top=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$1"
out=$(cd "$1" && pwd)
case "$out/" in "$top"/debian/*) echo "rsswatch: deb: OUTDIR inside debian/" >&2; exit 2 ;; esac
for tool in dpkg-buildpackage dh fakeroot; do
	command -v "$tool" >/dev/null 2>&1 || {
		echo "rsswatch: deb: $tool missing (scripts/deps.sh test installs it)" >&2
		exit 1
	}
done
version=$(sed -n '1s/^rsswatch (\([^)]*\)).*/\1/p' "$top/debian/changelog")
rm -rf "$out/src" "$out"/*.deb "$out"/*.buildinfo "$out"/*.changes
src=$out/src/rsswatch-$version
mkdir -p "$src"

# The tree as it is (changes not yet committed too), without what git ignores (build
# directories, databases); a tree that is no git checkout: all but the build
# directories.
cd "$top"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	git -c core.quotePath=false ls-files --cached --others --exclude-standard |
		while IFS= read -r f; do [ -e "$f" ] && printf '%s\n' "$f"; done |
		tar -cf - --no-recursion --verbatim-files-from -T - | tar -xf - -C "$src"
else
	tar -cf - --exclude=./.git --exclude=./build --exclude='./build-*' . | tar -xf - -C "$src"
fi

cd "$src"
jobs=$(nproc 2>/dev/null || echo 1)
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u BUILD -u SANITIZE -u WERROR -u CFLAGS \
	-u CPPFLAGS -u LDFLAGS DEB_BUILD_OPTIONS="parallel=$jobs" \
	dpkg-buildpackage -us -uc -b >"$out/build.log" 2>&1 || {
	tail -n 30 "$out/build.log" >&2
	echo "rsswatch: deb: dpkg-buildpackage failed (all of it in $out/build.log)" >&2
	exit 1
}
mv "$out/src"/*.deb "$out/src"/*.buildinfo "$out/src"/*.changes "$out/"
rm -rf "$out/src"
ls "$out"/*.deb
