#!/usr/bin/env bash
# labels: offline release
# cost: 35
# `cpack -G DEB` packs what `make install` installs, and the package installs and removes cleanly
# with dpkg: binary, zerodrop-sleep, lifecycle headers and CMake package, man page, completions.
# dpkg works on a root of its own under $WORK (--root), so /usr/bin/zerodrop and the host's
# package database stay untouched while other tests run; the folder is deleted at the end.
source "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || skip "dpkg installs files owned by root: this test needs root"
command -v dpkg >/dev/null && command -v cpack >/dev/null || skip "dpkg or cpack is missing"

cpack -G DEB --config "$BUILD_DIR/CPackConfig.cmake" -B "$WORK/pkg" >"$WORK/cpack.log" 2>&1 \
  || { cat "$WORK/cpack.log"; fail "cpack -G DEB failed"; }
deb=$(ls "$WORK"/pkg/zerodrop_*.deb)
# --field, not --info | grep -q: grep -q exits at the first match and under pipefail the writer's
# SIGPIPE would fail the pipeline.
[ "$(dpkg-deb --field "$deb" Package)" = zerodrop ] || fail "$deb is not a zerodrop package"

root="$WORK/root"
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates"
touch "$root/var/lib/dpkg/status" "$root/var/lib/dpkg/available"
# The private root's package database is empty, so no Depends (libc6, and in a sanitizer build
# libasan8) can be met there: --force-depends installs anyway; the host provides those libraries.
dpkg_root() { dpkg --root="$root" --log=/dev/null --force-script-chrootless --force-depends "$@"; }

dpkg_root -i "$deb" >"$WORK/install.log" 2>&1 || { cat "$WORK/install.log"; fail "dpkg -i failed"; }
dpkg_root -L zerodrop >"$WORK/files"
for f in /usr/bin/zerodrop /usr/bin/zerodrop-sleep /usr/share/man/man1/zerodrop.1.gz \
  /usr/share/bash-completion/completions/zerodrop /usr/share/zsh/vendor-completions/_zerodrop \
  /usr/share/fish/vendor_completions.d/zerodrop.fish /usr/include/zerodrop/lifecycle.h \
  /usr/share/zerodrop/cmake/zerodropConfig.cmake /usr/share/doc/zerodrop/README.md; do
  grep -qx "$f" "$WORK/files" || fail "dpkg -L zerodrop does not list $f"
  [ -f "$root$f" ] || fail "$f is listed but not installed"
done
[[ "$("$root/usr/bin/zerodrop" --version)" == *zerodrop* ]] || fail "the installed zerodrop does not run"
# kubectl finds plugins by name: kubectl-zerodrop is the same binary, naming itself so in --help.
[ "$(readlink "$root/usr/bin/kubectl-zerodrop")" = zerodrop ] || fail "no kubectl-zerodrop symlink"
grep -qx /usr/bin/kubectl-zerodrop "$WORK/files" || fail "dpkg -L zerodrop does not list kubectl-zerodrop"
# grep -c, not -q: it reads to the end, so the writer gets no SIGPIPE (as above).
"$root/usr/bin/kubectl-zerodrop" verify --help | grep -c "kubectl zerodrop verify" >/dev/null \
  || fail "kubectl-zerodrop verify --help does not name itself"

# The man page renders and names every command that --help lists.
if command -v man >/dev/null; then
  man -l "$root/usr/share/man/man1/zerodrop.1.gz" >"$WORK/man.txt" 2>/dev/null
  for c in $("$ZERODROP" --help | awk '/^Subcommands:/ {on = 1; next} on && /^$/ {exit} on {print $1}'); do
    # A short tag shares its line with the description (man's .TP layout); a long one stands alone.
  grep -Eq "^       $c( |\$)" "$WORK/man.txt" || fail "the man page does not describe '$c'"
  done
fi

# Completions: bash completes commands and a command's flags; zsh and fish parse, when installed.
bash_complete() {
  COMP_WORDS=("$@")
  COMP_CWORD=$(($# - 1))
  COMPREPLY=()
  _zerodrop
  echo "${COMPREPLY[*]}"
}
source "$root/usr/share/bash-completion/completions/zerodrop"
[ "$(bash_complete zerodrop si)" = "sim" ] || fail "bash: 'zerodrop si' does not complete to sim"
[[ " $(bash_complete zerodrop lab --prop) " == *" --propagation "* ]] \
  || fail "bash: 'zerodrop lab --prop' does not offer --propagation"
[[ " $(bash_complete zerodrop load --keep) " == *" --keepalive "* ]] \
  || fail "bash: 'zerodrop load --keep' does not offer --keepalive (a flag's two long names)"
[[ " $(bash_complete zerodrop audit --) " == *" --list-rules "* ]] \
  || fail "bash: 'zerodrop audit --' does not offer --list-rules"
if command -v zsh >/dev/null; then
  zsh -n "$root/usr/share/zsh/vendor-completions/_zerodrop" || fail "zsh cannot parse _zerodrop"
fi
if command -v fish >/dev/null; then
  fish -n "$root/usr/share/fish/vendor_completions.d/zerodrop.fish" || fail "fish cannot parse it"
fi

dpkg_root -r zerodrop >"$WORK/remove.log" 2>&1 || { cat "$WORK/remove.log"; fail "dpkg -r failed"; }
! dpkg_root -L zerodrop >/dev/null 2>&1 || fail "zerodrop is still listed after dpkg -r"
left=$(find "$root" -not -type d -not -path "$root/var/lib/dpkg/*")
[ -z "$left" ] || fail "dpkg -r left files behind: $left"
echo "ok: $(basename "$deb") installs $(wc -l <"$WORK/files") paths and removes them all"
