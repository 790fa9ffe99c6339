#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tests/bridge/test_views_cmd.sh: runs tests/bridge/test_views_cmd.py (the contract of
# `tracewire show`, `deps`, `stats` and `diff`, docs/views.md) against the built command and
# the real fixtures (tests/fixtures/real). make check runs it from the top build directory.
here=$(dirname "$0")
fixtures=${TW_FIXTURES_DIR:?TW_FIXTURES_DIR is not set (make check sets it)}
exec python3 "$here/test_views_cmd.py" "${1:-./bridge/tracewire}" "$fixtures"
