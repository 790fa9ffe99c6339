#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tests/bridge/test_convert_cmd.sh: runs tests/bridge/test_convert_cmd.py (the contract of
# `tracewire convert`, docs/bridge.md) against the built command and the real fixtures
# (tests/fixtures/real, or configure --with-fixtures). make check runs it from
# the top build directory.
here=$(dirname "$0")
fixtures=${TW_FIXTURES_DIR:?TW_FIXTURES_DIR is not set (make check sets it)}
exec python3 "$here/test_convert_cmd.py" "${1:-./bridge/tracewire}" "$fixtures"
