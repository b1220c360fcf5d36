#!/usr/bin/env bash
# Prints the interpreter make builds .venv from: the first of these that is Python 3.11+ and
# can make a venv with pip. The distribution's own build comes first: it is compiled with
# profile-guided and link-time optimisation, which a pyenv build is not unless asked
# (measured here: the bare interpreter starts in 10 against 37 ms; cairn's play, loads and
# start-up run 10-20% faster; PLAN "eighth session"). `make clean PYTHON=... test` chooses another.
for candidate in /usr/bin/python3 python3; do
    if command -v "$candidate" >/dev/null 2>&1 &&
        "$candidate" -c 'import sys, ensurepip, venv; sys.exit(sys.version_info < (3, 11))' \
            >/dev/null 2>&1; then
        echo "$candidate"
        exit 0
    fi
done
echo python3  # (none qualifies: venv's own error will say why)
