#!/usr/bin/env bash
# Instructions per packet of the slow path, the fast paths, each gate's decline
# (a near-miss frame through the declining gate, then the slow path) and the
# kernel flow hash, counted by valgrind's callgrind (deterministic, unlike times
# on a shared machine); see bench/cmd/instr.
#
#   bench/instructions.sh           print the table and fail when a fast path,
#                                   a decline or a closed gate counts more than
#                                   2% above the committed one, or a closed
#                                   gate more than closed_margin instructions
#                                   above the slow path on any row
#   bench/instructions.sh -write    print it and replace the committed table
#   bench/instructions.sh -write-nic  the same for the NIC parse and hash's
#                                   table (bench/testdata/nic-instructions.txt)
#
# Needs valgrind (Debian package valgrind).
set -euo pipefail
cd "$(dirname "$0")/.."

table=bench/testdata/instructions.txt
# What a Dissector with every gate closed may count above the slow path
# alone (docs/fast-paths.md, "Cost").
closed_margin=5
nictable=bench/testdata/nic-instructions.txt
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
# go build, not go run: callgrind finds the measured function by its symbol.
go build -o "$bin/instr" ./bench/cmd/instr

case "${1:-}" in
-write) exec "$bin/instr" -write "$table" ;;
-write-nic) exec "$bin/instr" -nic -write "$nictable" ;;
"")
  "$bin/instr" -check "$table" -closed-margin "$closed_margin"
  "$bin/instr" -nic -check "$nictable"
  ;;
*)
  echo "usage: $0 [-write | -write-nic]" >&2
  exit 2
  ;;
esac
