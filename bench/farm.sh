#!/usr/bin/env bash
# bench/farm.sh: the farm benchmarks behind README's Benchmarks table, with what they need.
#
#   bash bench/farm.sh overhead      farm overhead of one ExportMapImage (BenchmarkFarmOverhead, 300 requests)
#   bash bench/farm.sh worker-rss    a worker process's peak RSS over 200 1024×768 renders (BenchmarkWorkerRSS)
#   bash bench/farm.sh mixed         mixed load on separate processes, 8 clients, 10 s (BenchmarkMixedLoad)
#   bash bench/farm.sh seed          seeding the world sample, levels 0–7, per layout, 3 runs (BenchmarkSeedWorld, ≈10 min)
#   bash bench/farm.sh tiles         GetMapTile, in-process farm, every layout and cache setting, 3 runs (BenchmarkGetMapTile)
#   bash bench/farm.sh tiles-processes  GetMapTile, compact V2 with the default caches, separate processes, 3 runs
#   bash bench/farm.sh tile-rows     first read of every level-7 tile, in storage order (BenchmarkGetMapTileRows)
#   bash bench/farm.sh idle          CPU of an idle farm, 60 s per setup, then 300 renders (BenchmarkIdleCPU)
#   bash bench/farm.sh soak          20 min of quiet and mixed (normal + hostile) windows on separate processes (BenchmarkSoak)
#   bash bench/farm.sh refresh       1,000 PostGIS edits a minute for 3 min, COMMIT→fresh latency and the refresh backlog (BenchmarkRefreshSustained)
#
# Each runs its Go benchmark in e2e/ through scripts/test.sh, which starts what the tests need
# exactly as for the tests (a Redis, reused on 127.0.0.1:6379 or started; a MinIO server of its own
# on a free loopback port; PostgreSQL, python3-zeep and the reference tools, which these benchmarks
# do not use but the script checks; see scripts/test.sh) and stops what it started. The benchmark
# then starts the farm itself: in this process (api, coordinator and worker in the go test process)
# or as separate mapfarm processes, as its line above and its comment in e2e/ say. The machine
# (cores, CPU, load average) is printed before and after, since every figure depends on it; the
# figures are printed last, with the median [min–max] of each metric when a benchmark ran more
# than once.
#
# Environment (optional):
#   MAPFARM_BENCH_COUNT    runs per benchmark (default: 3 for seed, tiles, tiles-processes and
#                          tile-rows, else 1)
#   MAPFARM_BENCH_FILTER   a narrower -bench pattern, e.g. for tiles:
#                          'GetMapTile$/layout=compactV2/index=warm/memory=on/pages=on'
#                          (no spaces or glob characters: scripts/test.sh splits the flags on spaces)
#   MAPFARM_SOAK_DURATION, MAPFARM_SOAK_WINDOW, MAPFARM_SOAK_WARMUP, MAPFARM_SOAK_RPS,
#   MAPFARM_SOAK_REST_RPS, MAPFARM_SOAK_HOSTILE_RPS, MAPFARM_SOAK_SAMPLE  the soak's settings
#                          (e2e/soak_bench_test.go; default 1 min of warm-up, then 20 min of
#                          1-minute quiet and mixed windows; SOAP 10 and REST/WMTS/directory 5
#                          normal req/s, 2 hostile req/s of every front end)
#   MAPFARM_BENCH_IDLE_SECONDS  idle window of `idle` (default 60)
#   MAPFARM_BENCH_EDITS_PER_MIN, MAPFARM_BENCH_SUSTAIN  the edit rate and time of `refresh`
#                          (default 1000 and 3m; e2e/refresh_sustained_bench_test.go)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

usage() {
	sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'
	exit 2
}

count=1
timeout=30m
case ${1:-} in
overhead) bench='FarmOverhead' benchtime=300x ;;
worker-rss) bench='WorkerRSS' benchtime=200x ;;
mixed) bench='MixedLoad' benchtime=1x ;;
seed) bench='SeedWorld' benchtime=1x count=3 timeout=90m ;;
tiles) bench='GetMapTile$' benchtime=10000x count=3 timeout=60m ;;
tiles-processes) bench='GetMapTileProcesses' benchtime=10000x count=3 ;;
tile-rows) bench='GetMapTileRows' benchtime=16384x count=3 timeout=60m ;;
idle) bench='IdleCPU' benchtime=1x ;;
soak) bench='Soak' benchtime=1x timeout=0 ;;
refresh) bench='RefreshSustained' benchtime=1x ;;
*) usage ;;
esac
count=${MAPFARM_BENCH_COUNT:-$count}
bench=${MAPFARM_BENCH_FILTER:-$bench}

machine() {
	local cpu
	cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
	printf 'machine: %s cores (%s), load average %s, %s, commit %s\n' "$(nproc)" "${cpu:-unknown CPU}" \
		"$(cut -d' ' -f1-3 /proc/loadavg)" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
}

out=$(mktemp "${TMPDIR:-/tmp}/mapfarm-bench.XXXXXX")
trap 'rm -f "$out"' EXIT
before=$(machine)
echo "$before"
echo "bench/farm.sh $1: go test ./e2e -run '^\$' -bench '$bench' -benchtime $benchtime -count $count (through scripts/test.sh)"
rc=0
MAPFARM_GO_TEST_TIMEOUT=$timeout MAPFARM_FUZZ_TIME=0 \
	MAPFARM_GO_TEST_FLAGS="-run ^\$ -bench $bench -benchtime $benchtime -count $count" \
	./scripts/test.sh ./e2e/ 2>&1 | tee "$out" || rc=$?

printf '\n==== figures: bench/farm.sh %s ====\n' "$1"
echo "before: $before"
echo "after:  $(machine)"
grep '^soak: ' "$out" || true
# Benchmark lines: name, iterations, then value-unit pairs. One line per benchmark and metric,
# the median [min–max] over its runs.
awk '
/^Benchmark/ {
	name = $1; sub(/-[0-9]+$/, "", name)
	if (!(name in seen)) { seen[name] = 1; order[++n] = name }
	for (i = 3; i + 1 <= NF; i += 2) {
		key = name SUBSEP $(i + 1)
		if (!(key in cnt)) { units[name] = units[name] " " $(i + 1) }
		vals[key, ++cnt[key]] = $i
	}
}
END {
	for (k = 1; k <= n; k++) {
		name = order[k]
		printf "%s\n", name
		m = split(substr(units[name], 2), us, " ")
		for (j = 1; j <= m; j++) {
			key = name SUBSEP us[j]; c = cnt[key]
			for (a = 1; a <= c; a++) v[a] = vals[key, a] + 0
			for (a = 2; a <= c; a++) { x = v[a]; for (b = a - 1; b >= 1 && v[b] > x; b--) v[b + 1] = v[b]; v[b + 1] = x }
			if (c == 1) printf "    %-28s %g\n", us[j], v[1]
			else printf "    %-28s %g [%g–%g] (median of %d)\n", us[j], v[int((c + 1) / 2)], v[1], v[c], c
		}
	}
}' "$out"
exit "$rc"
