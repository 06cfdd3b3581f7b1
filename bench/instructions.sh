#!/usr/bin/env bash
# Instructions per packet of the slow path, the fast paths, each gate's decline
# (a near-miss frame through the declining gate, then the slow path) and the
# kernel flow hash, counted by valgrind's callgrind (deterministic, unlike times
# on a shared machine); see bench/cmd/instr.
#
#   bench/instructions.sh           print the table and fail when a fast path
#                                   or a decline counts more than 2% above the
#                                   committed one
#   bench/instructions.sh -write    print it and replace the committed table
#   bench/instructions.sh -write-nic  the same for the NIC parse and hash's
#                                   table (bench/testdata/nic-instructions.txt)
#
# Needs valgrind (Debian package valgrind).
set -euo pipefail
cd "$(dirname "$0")/.."

table=bench/testdata/instructions.txt
nictable=bench/testdata/nic-instructions.txt
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
# go build, not go run: callgrind finds the measured function by its symbol.
go build -o "$bin/instr" ./bench/cmd/instr

case "${1:-}" in
-write) exec "$bin/instr" -write "$table" ;;
-write-nic) exec "$bin/instr" -nic -write "$nictable" ;;
"")
  "$bin/instr" -check "$table"
  "$bin/instr" -nic -check "$nictable"
  ;;
*)
  echo "usage: $0 [-write | -write-nic]" >&2
  exit 2
  ;;
esac
