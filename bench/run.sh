#!/usr/bin/env bash
# bench/run.sh: end-to-end throughput and memory benchmark of `seglog append`,
# `seglog read` and `seglog verify-crc` against `cat` of the same bytes.
# Not part of CI. See bench/README.md.
#
#   bench/run.sh              full run (10M x 100 B lines, 1M x 1 KiB lines),
#                             writes bench/RESULTS.md
#   bench/run.sh --quick      1M / 100k lines, writes bench/work/RESULTS-quick.md
#   bench/run.sh --syscalls   also count syscalls (strace -c -f) of one append
#                             and one read of 1M 100-byte lines
#   bench/run.sh --runs N     N runs per command (default 3), medians reported
#   bench/run.sh --out FILE   write the Markdown report to FILE
set -euo pipefail
export LC_ALL=C

QUICK=0
SYSCALLS=0
RUNS=3
OUT=
while (($#)); do
	case $1 in
	--quick) QUICK=1 ;;
	--syscalls) SYSCALLS=1 ;;
	--runs)
		RUNS=${2:?--runs needs a number}
		shift
		;;
	--out)
		OUT=${2:?--out needs a file}
		shift
		;;
	-h | --help)
		sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*)
		echo "run.sh: unknown argument $1 (try --help)" >&2
		exit 2
		;;
	esac
	shift
done
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: --runs must be a positive integer" >&2; exit 2; }

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH=$ROOT/bench
WORK=$BENCH/work
IN=$WORK/in
SEGLOG=$WORK/seglog
W=$WORK/w # per-run data directories (deleted at the end)
ERRLOG=$WORK/stderr.log
RSSFILE=$WORK/rss.txt
WARMFILE=$WORK/warmup.tmp
cd "$ROOT"
mkdir -p "$WORK" "$IN"

if ((QUICK)); then
	N100=1000000 N1K=100000 NSMALL=100000
	VERIFY_BYTES=$((256 << 20))
	: "${OUT:=$WORK/RESULTS-quick.md}"
else
	N100=10000000 N1K=1000000 NSMALL=1000000
	VERIFY_BYTES=$((2 << 30)) # of .log per verify-crc workload
	: "${OUT:=$BENCH/RESULTS.md}"
fi
BIG=$((64 << 20)) # the large record: 64 MiB of value (the default --max-message-bytes)
MIB=1048576

log() { printf '[%(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
die() {
	echo "run.sh: $*" >&2
	exit 1
}
cleanup() { rm -f "$WARMFILE"; }
trap cleanup EXIT

# ---------------------------------------------------------------- build
log "building seglog and the input generator"
go build -o "$SEGLOG" . || die "go build of seglog failed"
go build -o "$WORK/gen" bench/gen/main.go || die "go build of bench/gen failed"

# Peak RSS: GNU time's %M if /usr/bin/time is GNU time, else our rusage wrapper.
if [[ -x /usr/bin/time ]] && /usr/bin/time -f '%U %S %M' -o "$RSSFILE" true 2>/dev/null &&
	[[ $(tail -n1 "$RSSFILE") =~ ^[0-9.]+\ [0-9.]+\ [0-9]+$ ]]; then
	TIMECMD=(/usr/bin/time -f '%U %S %M' -o "$RSSFILE")
	RSSTOOL="GNU time %U %S %M"
else
	go build -o "$WORK/maxrss" bench/maxrss/main.go || die "go build of bench/maxrss failed"
	TIMECMD=("$WORK/maxrss" -o "$RSSFILE")
	RSSTOOL="bench/maxrss (rusage)"
fi

# ---------------------------------------------------------------- inputs (cached)
# gen_lines FILE N WIDTH: N lines of WIDTH bytes (WIDTH-1 characters + \n).
gen_lines() {
	local f=$1 n=$2 width=$3
	if [[ -f $f && $(stat -c %s "$f") -eq $((n * width)) ]]; then
		return
	fi
	log "generating $f ($n lines of $width bytes)"
	"$WORK/gen" "$n" "$width" >"$f.tmp"
	mv "$f.tmp" "$f"
}
F100=$IN/l100-$N100.txt
F1K=$IN/l1024-$N1K.txt
FSMALL=$IN/l100-$NSMALL.txt
FBIG=$IN/big-64MiB.txt
FMIX=$IN/big-then-l100-$NSMALL.txt
gen_lines "$F100" "$N100" 100
gen_lines "$F1K" "$N1K" 1024
gen_lines "$FSMALL" "$NSMALL" 100
gen_lines "$FBIG" 1 $((BIG + 1))
if [[ ! -f $FMIX || $(stat -c %s "$FMIX") -ne $((BIG + 1 + NSMALL * 100)) ]]; then
	cat "$FBIG" "$FSMALL" >"$FMIX.tmp" && mv "$FMIX.tmp" "$FMIX"
fi
# Bring the inputs into the page cache, so every command reads them warm.
cat "$F100" "$F1K" "$FSMALL" "$FMIX" >/dev/null

# ---------------------------------------------------------------- helpers
# warm BYTES: write and delete a throwaway file of about BYTES right before
# timing. This VM hands freed memory back to its host and touching it again is
# 3-4x slower (shared/PERF-ANCHORS.md). Appends are warmed with twice the
# input's size: seglog writes ~1.6x its input for 100-byte lines (record
# headers and two index files), and every page it fills must have been warmed
# or its times swing 2-3x from run to run.
warm() {
	local mib=$(($1 / MIB))
	if ((mib < 64)); then mib=64; fi
	if ((mib > 4096)); then mib=4096; fi
	dd if=/dev/zero of="$WARMFILE" bs=1M count=$mib status=none
	rm -f "$WARMFILE"
}

# timed IN OUT CMD...: run CMD with stdin IN and stdout OUT; sets ELAPSED
# (seconds, wall clock), CPU_S (user+system seconds of CMD) and RSS_KB (peak
# RSS of CMD). Dies if CMD fails.
timed() {
	local in=$1 out=$2 t0 t1
	shift 2
	rm -f "$RSSFILE"
	t0=$EPOCHREALTIME
	if ! "${TIMECMD[@]}" "$@" <"$in" >"$out" 2>"$ERRLOG"; then
		cat "$ERRLOG" >&2
		die "command failed: $* <$in >$out"
	fi
	t1=$EPOCHREALTIME
	ELAPSED=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }')
	local u s m
	read -r u s m < <(tail -n1 "$RSSFILE")
	RSS_KB=$m
	CPU_S=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')
}

median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
maxof() { printf '%s\n' "$@" | sort -g | tail -n1; }

# Results, keyed by "workload|command".
declare -A TIMES RSS CPU RECS BYTES
ORDER=()
record() { # record WORKLOAD COMMAND RECORDS BYTES
	local k="$1|$2"
	[[ -v TIMES[$k] ]] || ORDER+=("$k")
	TIMES[$k]+="$ELAPSED "
	RSS[$k]+="$RSS_KB "
	CPU[$k]+="$CPU_S "
	RECS[$k]=$3
	BYTES[$k]=$4
}

# fresh_topic DIR: an empty data directory with topic t.
fresh_topic() {
	rm -rf "$1"
	mkdir -p "$1"
	"$SEGLOG" -q -d "$1" create t >/dev/null 2>"$ERRLOG" || { cat "$ERRLOG" >&2; die "seglog create failed"; }
}

# ---------------------------------------------------------------- append
# bench_append NAME FILE LINES: interleave seglog append (default sync, and
# --sync never) with cat FILE > W/cat.out, RUNS times each, rotating the order.
# Leaves the last default-sync data directory in $W/$NAME/seglog for reading.
bench_append() {
	local name=$1 f=$2 n=$3 size cmds rep i c dir
	size=$(stat -c %s "$f")
	cmds=(seglog seglog-nosync cat)
	log "append $name: ${#cmds[@]} commands x $RUNS runs"
	for ((rep = 0; rep < RUNS; rep++)); do
		for ((i = 0; i < ${#cmds[@]}; i++)); do
			c=${cmds[(i + rep) % ${#cmds[@]}]}
			dir=$W/$name/$c
			if [[ $c == cat ]]; then
				rm -rf "$dir"
				mkdir -p "$dir"
			else
				fresh_topic "$dir"
			fi
			sync
			warm $((2 * size))
			case $c in
			seglog) timed "$f" /dev/null "$SEGLOG" -d "$dir" append t ;;
			seglog-nosync) timed "$f" /dev/null "$SEGLOG" -d "$dir" append t --sync never ;;
			cat) timed "$f" "$dir/cat.out" cat ;;
			esac
			record "append $name" "$c" "$n" "$size"
			log "  $c run $((rep + 1)): ${ELAPSED}s, CPU ${CPU_S}s, peak RSS ${RSS_KB} KiB"
		done
	done
	rm -rf "$W/$name/cat" "$W/$name/seglog-nosync"
}

# ---------------------------------------------------------------- read
# bench_read NAME FILE LINES: seglog read of $W/NAME/seglog vs cat FILE, to /dev/null.
bench_read() {
	local name=$1 f=$2 n=$3 size cmds rep i c
	size=$(stat -c %s "$f")
	cmds=(seglog cat)
	log "read $name: ${#cmds[@]} commands x $RUNS runs"
	for ((rep = 0; rep < RUNS; rep++)); do
		for ((i = 0; i < ${#cmds[@]}; i++)); do
			c=${cmds[(i + rep) % ${#cmds[@]}]}
			warm $((256 * MIB))
			case $c in
			seglog) timed /dev/null /dev/null "$SEGLOG" -d "$W/$name/seglog" read t --format value ;;
			cat) timed "$f" /dev/null cat ;;
			esac
			record "read $name" "$c" "$n" "$size"
			log "  $c run $((rep + 1)): ${ELAPSED}s, CPU ${CPU_S}s, peak RSS ${RSS_KB} KiB"
		done
	done
}

# ---------------------------------------------------------------- verify-crc
# bench_verify NAME FILE LINES RECLEN: a data directory holding about
# VERIFY_BYTES of .log (FILE's lines over and over, appended with --sync never:
# default 1 GiB segments, index entry for every record), then seglog verify-crc
# --jobs 2 of it vs cat of its .log files to /dev/null, warm cache, interleaved,
# RUNS times each. verify-crc exiting non-zero (a problem found) fails the run.
bench_verify() {
	local name=$1 f=$2 n=$3 reclen=$4 dir=$W/verify-$1 lines copies size cmds rep i c
	lines=$((VERIFY_BYTES / reclen))
	copies=$(((lines + n - 1) / n))
	log "verify-crc $name: appending $lines records (~$((lines * reclen / MIB)) MiB of .log)"
	fresh_topic "$dir"
	# head closes the pipe early: the cat it cuts off dies of SIGPIPE.
	{ for ((i = 0; i < copies; i++)); do cat "$f" 2>/dev/null || true; done; } | head -n "$lines" |
		"$SEGLOG" -q -d "$dir" append t --sync never 2>"$ERRLOG" || { cat "$ERRLOG" >&2; die "seglog append for verify-crc failed"; }
	size=$(stat -c %s "$dir"/t/0/*.log | awk '{ s += $1 } END { print s }')
	cat "$dir"/t/0/*.log >/dev/null # into the page cache
	cmds=(seglog cat)
	log "verify-crc $name: ${#cmds[@]} commands x $RUNS runs"
	for ((rep = 0; rep < RUNS; rep++)); do
		for ((i = 0; i < ${#cmds[@]}; i++)); do
			c=${cmds[(i + rep) % ${#cmds[@]}]}
			warm $((256 * MIB))
			case $c in
			seglog) timed /dev/null /dev/null "$SEGLOG" -d "$dir" verify-crc t --jobs 2 ;;
			cat) timed /dev/null /dev/null cat "$dir"/t/0/*.log ;;
			esac
			record "verify $name" "$c" "$lines" "$size"
			log "  $c run $((rep + 1)): ${ELAPSED}s, CPU ${CPU_S}s, peak RSS ${RSS_KB} KiB"
		done
	done
	rm -rf "$dir"
}

# check_roundtrip NAME DIR FILE: `seglog read` must give back FILE byte for byte.
declare -A CHECK
check_roundtrip() {
	local name=$1 dir=$2 f=$3
	if "$SEGLOG" -d "$dir" read t --format value 2>"$ERRLOG" | cmp -s - "$f"; then
		CHECK[$name]=ok
	else
		CHECK[$name]="FAIL (read output differs from the input; $(head -c 300 "$ERRLOG"))"
		log "  round trip $name: FAIL"
		return 0
	fi
	log "  round trip $name: ok"
}

rm -rf "$W"
START=$EPOCHREALTIME
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)

bench_append 100B "$F100" "$N100"
check_roundtrip "100 B lines" "$W/100B/seglog" "$F100"
bench_read 100B "$F100" "$N100"
rm -rf "$W/100B"

bench_append 1KiB "$F1K" "$N1K"
check_roundtrip "1 KiB lines" "$W/1KiB/seglog" "$F1K"
bench_read 1KiB "$F1K" "$N1K"
rm -rf "$W/1KiB"

# Records of 100-byte lines are 28 + 99 bytes, of 1 KiB lines 28 + 1023.
bench_verify 100B "$F100" "$N100" 127
bench_verify 1KiB "$F1K" "$N1K" 1051

# ---------------------------------------------------------------- memory
# Peak RSS of append and read for: many small lines; one 64 MiB line; a 64 MiB
# line followed by many small lines. Budget: 64 MiB beyond the largest record.
declare -A MEM_APPEND MEM_READ MEM_LARGEST
MEM_ORDER=()
mem_case() {
	local name=$1 f=$2 largest=$3 dir=$W/mem
	log "memory: $name"
	MEM_ORDER+=("$name")
	MEM_LARGEST[$name]=$largest
	fresh_topic "$dir"
	sync
	warm $((256 * MIB))
	timed "$f" /dev/null "$SEGLOG" -d "$dir" append t
	MEM_APPEND[$name]=$RSS_KB
	warm $((256 * MIB))
	timed /dev/null /dev/null "$SEGLOG" -d "$dir" read t --format value
	MEM_READ[$name]=$RSS_KB
	check_roundtrip "$name" "$dir" "$f"
	log "  append ${MEM_APPEND[$name]} KiB, read ${MEM_READ[$name]} KiB"
	rm -rf "$dir"
}
mem_case "$NSMALL lines of 100 B" "$FSMALL" 99
mem_case "one 64 MiB line" "$FBIG" "$BIG"
mem_case "one 64 MiB line, then $NSMALL lines of 100 B" "$FMIX" "$BIG"

# ---------------------------------------------------------------- syscalls
SYSC_APPEND= SYSC_READ=
if ((SYSCALLS)); then
	if command -v strace >/dev/null; then
		log "syscall counts (strace -c -f) of one append and one read of 1M lines of 100 B"
		FS1M=$IN/l100-1000000.txt
		gen_lines "$FS1M" 1000000 100
		fresh_topic "$W/sc"
		strace -c -S calls -f -o "$WORK/strace-append.txt" "$SEGLOG" -d "$W/sc" append t <"$FS1M" 2>"$ERRLOG" >/dev/null
		strace -c -S calls -f -o "$WORK/strace-read.txt" "$SEGLOG" -d "$W/sc" read t --format value </dev/null >/dev/null 2>"$ERRLOG"
		SYSC_APPEND=$(head -n 14 "$WORK/strace-append.txt"; grep -E '^-+|total' "$WORK/strace-append.txt" | tail -n 1)
		SYSC_READ=$(head -n 14 "$WORK/strace-read.txt"; grep -E '^-+|total' "$WORK/strace-read.txt" | tail -n 1)
		rm -rf "$W/sc"
	else
		log "strace not found; skipping --syscalls"
	fi
fi
rm -rf "$W"
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)
TOTAL=$(awk -v a="$START" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }')

# ---------------------------------------------------------------- report
# Per row: median time, records/s, MB/s (10^6 bytes/s of input), % of cat's MB/s.
declare -A RPS MBS PCT MEDT PEAK MEDCPU
for k in "${ORDER[@]}"; do
	read -ra ts <<<"${TIMES[$k]}"
	read -ra rs <<<"${RSS[$k]}"
	read -ra cs <<<"${CPU[$k]}"
	MEDCPU[$k]=$(median "${cs[@]}")
	MEDT[$k]=$(median "${ts[@]}")
	PEAK[$k]=$(maxof "${rs[@]}")
	RPS[$k]=$(awk -v n="${RECS[$k]}" -v t="${MEDT[$k]}" 'BEGIN { printf "%.0f", n / t }')
	MBS[$k]=$(awk -v b="${BYTES[$k]}" -v t="${MEDT[$k]}" 'BEGIN { printf "%.0f", b / t / 1e6 }')
done
for k in "${ORDER[@]}"; do
	c=${k%%|*}'|cat'
	PCT[$k]=$(awk -v a="${MBS[$k]}" -v b="${MBS[$c]}" 'BEGIN { printf "%.0f", 100 * a / b }')
done

fmt_rps() { awk -v r="$1" 'BEGIN { printf (r >= 1e6 ? "%.2f M" : "%.0f k"), (r >= 1e6 ? r / 1e6 : r / 1e3) }'; }
fmt_mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
verdict() { awk -v a="$1" -v op="$2" -v b="$3" 'BEGIN { ok = (op == ">=") ? (a >= b) : (a < b); print ok ? "**met**" : "**not met**" }'; }

SEGLOG_MAX_RSS=0
for k in "${ORDER[@]}"; do
	if [[ $k == *'|seglog'* ]] && ((PEAK[$k] > SEGLOG_MAX_RSS)); then SEGLOG_MAX_RSS=${PEAK[$k]}; fi
done
MEM_OVER=0 # worst peak RSS beyond the largest record, KiB, across the memory cases
for m in "${MEM_ORDER[@]}"; do
	for v in "${MEM_APPEND[$m]}" "${MEM_READ[$m]}"; do
		o=$((v - MEM_LARGEST[$m] / 1024))
		if ((o > MEM_OVER)); then MEM_OVER=$o; fi
	done
done

REV=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
DIRTY=$(git --no-optional-locks status --porcelain --untracked-files=no 2>/dev/null | wc -l)
{
	echo "# seglog benchmark results"
	echo
	if ((QUICK)); then echo "**Quick run (--quick): small inputs, figures are indicative only.**"; echo; fi
	echo "Produced by \`bench/run.sh\` (see bench/README.md). Machines are shared and"
	echo "noisy: compare the ratios within one run, not absolute figures across runs."
	echo
	echo "- Date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "- Machine: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')), $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo) RAM, kernel $(uname -r), filesystem $(df -T "$WORK" | awk 'NR == 2 { print $2 }')"
	echo "- $(go version | sed 's/^go version //') ; seglog at commit $REV$( ((DIRTY)) && echo " plus $DIRTY locally modified files (work in progress)")"
	echo "- $RUNS runs per command, interleaved (order rotated each round), median shown; peak RSS is the largest of the runs ($RSSTOOL). Each run: fresh data directory (topic created beforehand), \`sync\`, then a throwaway file written and deleted right before timing. Inputs are in the page cache."
	echo "- Whole run: ${TOTAL}s. Load average (1, 5, 15 min) at the start: $LOAD_START; at the end: $LOAD_END (other work on the machine shows up here and in the spread of the runs)."
	echo
	if awk -v l="${LOAD_START%% *} ${LOAD_END%% *}" -v n="$(nproc)" 'BEGIN { split(l, a, " "); exit !(a[1] > n / 2 || a[2] > n / 2) }'; then
		echo "**Warning: the machine was busy with other work (1-minute load average above half its CPUs); wall times below are inflated and noisy. Compare the CPU column, or run again when it is idle.**"
		echo
	fi
	echo "## Throughput"
	echo
	echo "| workload | command | records | median time | records/s | MB/s | % of cat's MB/s | CPU s (user+sys) | peak RSS (MiB) | runs (s) |"
	echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---|"
	for k in "${ORDER[@]}"; do
		w=${k%%|*} c=${k#*|}
		case "$w|$c" in
		append*\|seglog) cmd='`seglog append t < FILE`' ;;
		append*\|seglog-nosync) cmd='`seglog append t --sync never < FILE`' ;;
		append*\|cat) cmd='`cat FILE > W/cat.out`' ;;
		read*\|seglog) cmd='`seglog read t --format value > /dev/null`' ;;
		read*\|cat) cmd='`cat FILE > /dev/null`' ;;
		verify*\|seglog) cmd='`seglog verify-crc t --jobs 2 > /dev/null`' ;;
		verify*\|cat) cmd='`cat W/t/0/*.log > /dev/null`' ;;
		esac
		runs=$(for t in ${TIMES[$k]}; do printf '%.3f ' "$t"; done)
		printf '| %s | %s | %s | %.3f s | %s | %s | %s%% | %s | %s | %s|\n' \
			"$w" "$cmd" "${RECS[$k]}" "${MEDT[$k]}" "$(fmt_rps "${RPS[$k]}")" "${MBS[$k]}" "${PCT[$k]}" "${MEDCPU[$k]}" \
			"$([[ $c == cat ]] && echo "($(fmt_mib "${PEAK[$k]}"))" || fmt_mib "${PEAK[$k]}")" "$runs"
	done
	echo
	echo "100B = lines of 99 characters + newline, 1KiB = 1023 characters + newline."
	echo "MB/s counts the input file's bytes (10^6 bytes/s); for verify, the .log files'"
	echo "bytes (~$((VERIFY_BYTES >> 20)) MiB of segments, default 1 GiB segment size, an index entry per"
	echo "record), which verify-crc reads along with both index files. The default \`append\` syncs"
	echo "(fdatasync) at exit; \`cat\` does not sync, so compare \`--sync never\` with cat"
	echo "for the write path alone, and the default with cat for what a user waits for."
	echo "CPU s is the median of the command's user+system time: wall time well above it"
	echo "means waiting (for the disk, for the sync, or for other work on the machine)."
	echo
	echo "## Round trip"
	echo
	echo "\`seglog read t --format value | cmp - FILE\` after append:"
	echo
	for n in "${!CHECK[@]}"; do echo "- $n: ${CHECK[$n]}"; done | sort
	echo
	echo "## Memory: large records"
	echo
	echo "Fresh topic, default flags. Budget: peak RSS under 64 MiB beyond the largest record."
	echo
	echo "| input | largest record | append peak RSS (MiB) | read peak RSS (MiB) | worst beyond largest record (MiB) |"
	echo "|---|---:|---:|---:|---:|"
	for m in "${MEM_ORDER[@]}"; do
		a=${MEM_APPEND[$m]} r=${MEM_READ[$m]} l=${MEM_LARGEST[$m]}
		worst=$(((a > r ? a : r) - l / 1024))
		printf '| %s | %s | %s | %s | %s |\n' "$m" \
			"$(awk -v l="$l" 'BEGIN { print (l >= 1048576) ? l / 1048576 " MiB" : l " B" }')" \
			"$(fmt_mib "$a")" "$(fmt_mib "$r")" "$(fmt_mib "$worst")"
	done
	echo
	echo "## Targets"
	echo
	a100="append 100B|seglog" a1k="append 1KiB|seglog" r100="read 100B|seglog" r1k="read 1KiB|seglog"
	v100="verify 100B|seglog" v1k="verify 1KiB|seglog"
	echo "| target | measured | verdict |"
	echo "|---|---:|---|"
	echo "| append, 100 B lines: >= 4 M records/s | $(fmt_rps "${RPS[$a100]}")/s ($(fmt_rps "${RPS["append 100B|seglog-nosync"]}")/s with --sync never) | $(verdict "${RPS[$a100]}" '>=' 4000000) |"
	echo "| append, 1 KiB lines: >= 35% of cat's MB/s | ${PCT[$a1k]}% (${PCT["append 1KiB|seglog-nosync"]}% with --sync never) | $(verdict "${PCT[$a1k]}" '>=' 35) |"
	echo "| read, 100 B records: >= 10 M records/s | $(fmt_rps "${RPS[$r100]}")/s | $(verdict "${RPS[$r100]}" '>=' 10000000) |"
	echo "| read, 1 KiB records: >= 40% of cat's MB/s | ${PCT[$r1k]}% | $(verdict "${PCT[$r1k]}" '>=' 40) |"
	echo "| verify-crc --jobs 2, 100 B records: >= 25% of cat's MB/s | ${PCT[$v100]}% | $(verdict "${PCT[$v100]}" '>=' 25) |"
	echo "| verify-crc --jobs 2, 1 KiB records: >= 60% of cat's MB/s | ${PCT[$v1k]}% | $(verdict "${PCT[$v1k]}" '>=' 60) |"
	echo "| peak RSS < 64 MiB (throughput runs) | $(fmt_mib "$SEGLOG_MAX_RSS") MiB | $(verdict "$SEGLOG_MAX_RSS" '<' 65536) |"
	echo "| peak RSS < 64 MiB beyond the largest record (memory runs) | $(fmt_mib "$MEM_OVER") MiB | $(verdict "$MEM_OVER" '<' 65536) |"
	echo
	echo "The append targets are judged on the default \`--sync exit\` (what a user runs)."
	if [[ -n $SYSC_APPEND ]]; then
		echo
		echo "## Syscalls (strace -c -f, 1M lines of 100 B)"
		echo
		echo "append:"
		echo
		echo '```'
		echo "$SYSC_APPEND"
		echo '```'
		echo
		echo "read:"
		echo
		echo '```'
		echo "$SYSC_READ"
		echo '```'
	fi
	# The sections other bench scripts own, kept from the report this one
	# replaces.
	if [[ -f $OUT ]]; then
		sed -n '/^<!-- begin bench\/.* -->$/,/^<!-- end bench\/.* -->$/p' "$OUT"
	fi
} >"$OUT.new"
mv "$OUT.new" "$OUT"

log "done in ${TOTAL}s; report in $OUT"
cat "$OUT"
fails=$(printf '%s\n' "${CHECK[@]}" | grep -c FAIL || true)
((fails == 0)) || die "$fails round-trip check(s) failed"
