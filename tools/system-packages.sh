#!/usr/bin/env bash
# Installs the Debian packages the tests need when their binaries are missing (make test calls
# this, so a fresh machine and CI run every test). Each argument is BINARY=PACKAGE; a binary
# found on PATH or at an absolute path needs nothing. Without apt-get or root, it says so in one
# line and goes on: the tests then skip with a one-line reason.
set -uo pipefail
missing=()
for pair in "$@"; do
    binary="${pair%%=*}"
    package="${pair#*=}"
    if [[ "$binary" == /* ]]; then
        [[ -x "$binary" ]] && continue
    elif command -v "$binary" >/dev/null 2>&1; then
        continue
    fi
    missing+=("$package")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0
if ! command -v apt-get >/dev/null 2>&1 || [[ "$(id -u)" != 0 ]]; then
    echo "system-packages: cannot install ${missing[*]} (needs apt-get as root); their tests will skip"
    exit 0
fi
echo "system-packages: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null 2>&1; then
    apt-get update -qq >/dev/null 2>&1
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null 2>&1 \
        || echo "system-packages: apt-get could not install ${missing[*]}; their tests will skip"
fi
exit 0
