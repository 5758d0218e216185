#!/usr/bin/env bash
# bench/copy.sh: seglog copy-partition of a ~2 GiB partition against
# `cp -r SRC DST && sync -f DST` (the same bytes made just as durable), in
# the same run, interleaved. Not part of CI. See bench/README.md.
#
#   bench/copy.sh             2 GiB of 1 KiB records, 5 runs each; its section
#                             of bench/RESULTS.md is replaced with the result
#   bench/copy.sh --quick     256 MiB, 3 runs; prints the result only
#   bench/copy.sh --runs N    N runs each
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=5 MIB_TOTAL=2048 QUICK=
while (($#)); do
	case $1 in
	--quick) RUNS=3 MIB_TOTAL=256 QUICK=1 ;;
	--runs) RUNS=$2 && shift ;;
	*) echo "copy.sh: unknown argument $1" >&2 && exit 2 ;;
	esac
	shift
done
WORK=bench/work/copy
SEGLOG=$PWD/bench/work/seglog
mkdir -p "$WORK"
log() { printf '[%(%H:%M:%S)T] %s\n' -1 "$*" >&2; }

go build -o "$SEGLOG" .
go build -o bench/work/gen bench/gen/main.go
SRC=$WORK/src
LINES=$((MIB_TOTAL * 1024)) # 1 KiB lines
if [[ ! -f $WORK/src.ok || $(cat "$WORK/src.ok") != "$LINES" ]]; then
	log "building a partition of $LINES 1 KiB records"
	rm -rf "$SRC" "$WORK/src.ok"
	"$SEGLOG" -q -d "$SRC" create t
	bench/work/gen "$LINES" 1024 | "$SEGLOG" -q -d "$SRC" append t --sync never
	echo "$LINES" >"$WORK/src.ok"
fi
BYTES=$(du -sb "$SRC/t/0" | cut -f1)
cat "$SRC"/t/0/* >/dev/null # the source warm in the page cache, for both
sync

now() { date +%s.%N; }
declare -a CP SL
for ((i = 0; i < RUNS; i++)); do
	order=(cp seglog)
	((i % 2)) && order=(seglog cp) # neither always goes first
	for tool in "${order[@]}"; do
		rm -rf "$WORK/dst-$tool" && mkdir -p "$WORK/dst-$tool/t" && sync
		t0=$(now)
		if [[ $tool == cp ]]; then
			cp -r "$SRC/t/0" "$WORK/dst-cp/t/0" && sync -f "$WORK/dst-cp/t/0"
		else
			"$SEGLOG" -q -d "$SRC" copy-partition t 0 --to "$WORK/dst-seglog" >/dev/null
		fi
		t1=$(now)
		s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
		log "run $i $tool: ${s}s"
		if [[ $tool == cp ]]; then CP+=("$s"); else SL+=("$s"); fi
	done
done
cmp <(cd "$SRC/t/0" && cat ./*) <(cd "$WORK/dst-seglog/t/0" && cat ./*) || { echo "copy differs from the source" >&2; exit 1; }
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
mc=$(median "${CP[@]}") ms=$(median "${SL[@]}")
report() {
	echo "## copy-partition (bench/copy.sh)"
	echo
	awk -v b="$BYTES" -v c="$mc" -v s="$ms" -v runs="$RUNS" 'BEGIN {
		printf "A partition of 1 KiB records, %.2f GiB (.log and indexes), warm in the page cache; the\n", b / 2^30
		printf "destination on the same disk. %d runs each, interleaved, alternating which goes first;\n", runs
		printf "medians.\n\n| command | time | MB/s |\n|---|---:|---:|\n"
		printf "| cp -r SRC DST && sync -f DST | %.2f s | %.0f |\n", c, b / c / 1e6
		printf "| seglog copy-partition | %.2f s | %.0f |\n", s, b / s / 1e6
		printf "\nseglog copy-partition: **%.0f%%** of cp + sync'"'"'s throughput (target >= 90%%).\n", 100 * c / s
	}'
	echo
	echo "All runs (s): cp ${CP[*]}; seglog ${SL[*]}."
}
section=$(report)
echo "$section"
if [[ -z $QUICK ]]; then
	source bench/section.sh
	replace_section bench/copy.sh <<<"$section"
	log "wrote its section of bench/RESULTS.md"
fi
