#!/bin/sh
# The installed belt runs from its prefix alone (doc/install.md).
#
# A copy of the distributed source (make distdir) is configured with a
# temporary prefix, built and installed with DESTDIR, the staged tree is
# moved to the prefix (as a package manager unpacks it), and the copy of
# the source and its build are deleted. Then belt run, info and tokenize
# run from the prefix with an empty environment, on the CPU and, if there
# is a Vulkan device, on Vulkan; they must find libbelt, their plugins,
# llama.yaml and belt.yaml in the prefix and mention no build or source
# folder. Last the libtool archives (*.la) are deleted, as Debian packages
# ship none, and belt must still find its plugins.
#
# Before that, the build's own belt must run uninstalled with an empty
# environment too (from its build tree and source copy).
#
# The prefix's lib/ is declared one the dynamic linker is configured for
# (LT_SYS_LIBRARY_PATH), as /usr/local/lib is on Debian: libtool then
# records no run path of its own, and ld.so finds a newly installed
# libbelt there only after ldconfig, which is what the default prefix
# gets (`libbelt.so.0: cannot open shared object file`).
#
# Needs BELT_BUILDDIR (a configured build tree) and BELT_SHARED_DIR, as
# make check sets them. Takes one build of the project.
set -eu

: "${BELT_BUILDDIR:?set by make check}" "${BELT_SHARED_DIR:?set by make check}"
model="$BELT_SHARED_DIR/models/stories260K.f32.gguf"
if [ ! -r "$model" ]; then
	echo "SKIP: no $model"
	exit 77
fi
BELT_BIN="${BELT_BIN:-$BELT_BUILDDIR/belt}"
jobs="${BELT_INSTALL_TEST_JOBS:-2}"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/belt-install.XXXXXX")
tmp=$(cd "$tmp" && pwd -P)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
src="$tmp/src" build="$tmp/build" stage="$tmp/stage" prefix="$tmp/prefix"
mkdir "$tmp/home"

# our own sub-makes, not make check's jobserver or flags
unset MAKEFLAGS MFLAGS MAKELEVEL || true

fail() {
	echo "FAIL: $*"
	exit 1
}

step() {
	echo "== $*"
}

step "source copy (make distdir) in $src"
make -s -C "$BELT_BUILDDIR" distdir distdir="$src" top_distdir="$src" >/dev/null
mkdir "$build"
cd "$build"
step "configure --prefix=$prefix, make -j$jobs, make install DESTDIR=$stage"
LT_SYS_LIBRARY_PATH="$prefix/lib:" "$src/configure" -q --prefix="$prefix" \
	--with-shared="$BELT_SHARED_DIR" >configure.out 2>&1 || { cat configure.out; fail configure; }
make -s -j"$jobs" >make.out 2>&1 || { tail -40 make.out; fail make; }
# before installing, the build tree's belt runs uninstalled with no
# environment: its plugins from the build, llama.yaml from the source copy
echo "\$ $build/belt run (uninstalled)"
env -i PATH=/usr/bin:/bin HOME="$tmp/home" ./belt run -m "$model" -p "Once upon a time" -n 8 -t 2 \
	>run.out 2>&1 || { cat run.out; fail "the uninstalled belt run"; }
env -i PATH=/usr/bin:/bin HOME="$tmp/home" ./belt info >info.out 2>&1 &&
	grep -F -q "search path $prefix/lib/belt/plugins:$build/plugins)" info.out ||
	{ cat info.out; fail "the uninstalled belt info: not the build tree's plugins"; }
make -s install DESTDIR="$stage" >install.out 2>&1 || { tail -40 install.out; fail "make install"; }
cd /
step "delete $src and $build; move the staged tree to $prefix"
rm -rf "$src" "$build"
mv "$stage$prefix" "$prefix"
rm -rf "$stage"
[ -x "$prefix/bin/belt" ] || fail "no $prefix/bin/belt"
[ -f "$prefix/share/man/man1/belt.1" ] || fail "no $prefix/share/man/man1/belt.1"
if command -v readelf >/dev/null; then
	for f in "$prefix/bin/belt" "$prefix"/lib/belt/plugins/*.so; do
		rp=$(readelf -d "$f" | sed -n 's/.*Library r[a-z]*path: \[\(.*\)\]/\1/p')
		echo "  $(basename "$f"): run path ${rp:-none}"
	done
fi

# belt from the prefix, no environment but PATH and HOME
belt() {
	env -i PATH=/usr/bin:/bin HOME="$tmp/home" "$prefix/bin/belt" "$@"
}

# run CMD...: stdout to $tmp/out, stderr to $tmp/err; both shown on failure;
# neither may name the deleted folders
run() {
	echo "\$ belt $*"
	if ! belt "$@" >"$tmp/out" 2>"$tmp/err"; then
		cat "$tmp/out" "$tmp/err"
		fail "belt $*"
	fi
	if grep -F -e "$src" -e "$build" "$tmp/out" "$tmp/err"; then
		fail "belt $* names the deleted source or build folder"
	fi
}

run info
cat "$tmp/out"
grep -F -q "search path $prefix/lib/belt/plugins)" "$tmp/out" ||
	fail "belt info: the plugin search path is not the installed folder alone"
grep -E -q "^  backend-cpu .*\($prefix/lib/belt/plugins/backend-cpu\.(la|so)\)" "$tmp/out" ||
	fail "belt info: no installed backend-cpu"

run info -m "$model"
grep -E -q "^  n_layer +5$" "$tmp/out" ||
	{ cat "$tmp/out"; fail "belt info -m: no hyperparameters (llama.yaml not found?)"; }
echo "  ($(wc -l <"$tmp/out") lines, hyperparameters resolved)"

run tokenize -m "$model" -p hi
cat "$tmp/out"
grep -q -- "->" "$tmp/out" || fail "belt tokenize: no tokens"

prompt="Once upon a time"
run run -m "$model" -p "$prompt" -n 8 -t 2
cpu_text=$(cat "$tmp/out")
echo "  cpu: $prompt|$cpu_text"
[ -n "$cpu_text" ] || fail "belt run: no text"
# the uninstalled belt of this build tree says the same
if [ -x "$BELT_BIN" ]; then
	ref=$("$BELT_BIN" run -m "$model" -p "$prompt" -n 8 -t 2 2>/dev/null) ||
		fail "the build tree's belt run failed"
	[ "$ref" = "$cpu_text" ] || fail "installed and build-tree belt differ: '$cpu_text' vs '$ref'"
fi

# an architecture that comes as a plugin (arch-gemma2), found installed
gemma2="$BELT_SHARED_DIR/models/arch/gemma2.gguf"
run info
grep -E -q "^  gemma2 +$prefix/lib/belt/plugins/arch-gemma2\.(la|so)$" "$tmp/out" ||
	{ cat "$tmp/out"; fail "belt info: the installed arch-gemma2 is not listed"; }
run run -m "$gemma2" -p "$prompt" -n 8 -t 2
gemma2_text=$(cat "$tmp/out")
echo "  gemma2 (plugin): $prompt|$gemma2_text"
[ -n "$gemma2_text" ] || fail "belt run gemma2: no text"

if ! ls "$prefix"/lib/belt/plugins/backend-vulkan.* >/dev/null 2>&1; then
	echo "SKIP vulkan: this build has no Vulkan backend (configure found no Vulkan or glslc)"
elif ! belt info --backend vulkan >"$tmp/out" 2>&1 ||
	! grep -E -q "^  vulkan: [1-9][0-9]* device" "$tmp/out"; then
	echo "SKIP vulkan: no Vulkan device: $(grep -E "vulkan|error" "$tmp/out" | head -1)"
else
	run info --backend vulkan
	grep -E "^  vulkan: |^    0: " "$tmp/out"
	run run -m "$model" -p "$prompt" -n 8 -t 2 --backend vulkan
	vk_text=$(cat "$tmp/out")
	echo "  vulkan: $prompt|$vk_text"
	[ "$vk_text" = "$cpu_text" ] || fail "vulkan and cpu text differ"
	run info -m "$model" --backend vulkan
fi

step "without the libtool archives (*.la), as a Debian package installs it"
rm -f "$prefix"/lib/*.la "$prefix"/lib/belt/plugins/*.la
run info
grep -E "^  backend-" "$tmp/out"
grep -E -q "^  backend-cpu .*\($prefix/lib/belt/plugins/backend-cpu\.so\)" "$tmp/out" ||
	{ cat "$tmp/out"; fail "belt info: backend-cpu.so not found without .la"; }
run run -m "$model" -p "$prompt" -n 8 -t 2
[ "$(cat "$tmp/out")" = "$cpu_text" ] || fail "belt run without .la files differs"
run run -m "$gemma2" -p "$prompt" -n 8 -t 2
[ "$(cat "$tmp/out")" = "$gemma2_text" ] || fail "belt run gemma2 without .la files differs"

echo "PASS: the installed belt runs from $prefix alone"
