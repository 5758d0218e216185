#!/usr/bin/env bash
# bench/latency.sh: the delay from a line entering `seglog append`'s stdin to
# `seglog tail -f` printing it (10 000 records trickled one at a time, 1 ms
# apart, into 3 partitions), and the CPU `tail -f` uses on an idle topic.
# Replaces its section of bench/RESULTS.md. Not part of CI.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p bench/work
go build -o bench/work/seglog .
result=$(go run bench/latency/main.go -seglog bench/work/seglog -n 10000 -gap 1ms -idle 10s 2>/dev/null)
echo "$result"
source bench/section.sh
{
	echo "## tail -f latency and idle CPU (bench/latency.sh)"
	echo
	echo "Target: p99 under 10 ms from append's stdin to tail -f's stdout; under 1% of a core idle."
	echo
	sed 's/^/- /' <<<"$result"
} | replace_section bench/latency.sh
