#!/usr/bin/env bash
# Side-by-side render benchmark: UMN MapServer 8 (map2img) and mapfarm's internal/render on the same
# GeoPackage, style and sizes, in alternating rounds of one run, so machine noise hits both alike.
#
# Usage: bench/render.sh [ROUNDS]   (default 5; each round draws 50 images per case and program)
# Prints per-round figures, then the median ms/image (wall and CPU) of each program and the ratio
# MapServer/mapfarm (above 1 means mapfarm is faster) for the 1024×768 world PNG, the 256×256 zoom-4
# tile (x 8, y 5) and a 256×256 zoom-8 tile over Paris (x 129, y 88). mapfarm's figures use features
# held in memory; "read from GPKG" is the world map with mapfarm reading the GeoPackage (R-tree
# query, WKB decoding) on every draw, as map2img does.
set -euo pipefail
rounds=${1:-5}
n=50
root=$(cd "$(dirname "$0")/.." && pwd)
ms=$root/bench/mapserver
command -v map2img >/dev/null || { echo "map2img not found: apt-get install mapserver-bin fonts-dejavu-core" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$root" && go test -c -o "$tmp/render.test" ./internal/render)

# mapserver_ms ARGS...: "wall cpu" mean ms per image of map2img -c $n in one process (as the reference
# run.sh; the process's start-up and data loading are included, spread over the $n images).
mapserver_ms() {
	local t
	t=$( { TIMEFORMAT='%R %U %S'; time (cd "$ms" && map2img -conf mapserver.conf -m world.map -o "$tmp/ms.png" -c $n "$@" >/dev/null 2>&1); } 2>&1)
	awk -v n=$n -v t="$t" 'BEGIN { split(t, a, " "); printf "%.2f %.2f", a[1] * 1000 / n, (a[2] + a[3]) * 1000 / n }'
}

# mapfarm_ms BENCH: "wall cpu" ms per image (draw + PNG encode) from the Go benchmark, $n iterations,
# on one CPU (GOMAXPROCS=1, like single-threaded map2img).
mapfarm_ms() {
	(cd "$root/internal/render" && "$tmp/render.test" -test.run '^$' -test.bench "^$1\$" -test.benchtime ${n}x -test.cpu 1) |
		awk '/^Benchmark/ { for (i = 1; i <= NF; i++) { if ($(i+1) == "ns/op") w = $i / 1e6; if ($(i+1) == "cpu-ms/op") c = $i }; printf "%.2f %.2f", w, c }'
}

median() { sort -g | awk '{ v[NR] = $1 } END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.2f", m }'; }

# The cases: name, Go benchmark, map2img options (the map file's own extent and size for the world).
z4=(-s 256 256 -e 0 5009377.085697 2504688.542849 7514065.628546)
z8=(-s 256 256 -e 156543.033928 6105178.323196 313086.067856 6261721.357124)
: >"$tmp/ms_world"; : >"$tmp/mf_world"; : >"$tmp/ms_z4"; : >"$tmp/mf_z4"; : >"$tmp/ms_z8"; : >"$tmp/mf_z8"; : >"$tmp/mf_gpkg"
echo "ms per image, wall / CPU; mapserver = map2img -c $n, mapfarm = go test -bench (draw + PNG encode)"
for r in $(seq 1 "$rounds"); do
	a=$(mapserver_ms); b=$(mapfarm_ms BenchmarkWorld1024PNG)
	c=$(mapserver_ms "${z4[@]}"); d=$(mapfarm_ms BenchmarkTileZ4)
	e=$(mapserver_ms "${z8[@]}"); f=$(mapfarm_ms BenchmarkTileZ8)
	g=$(mapfarm_ms BenchmarkWorld1024PNGFromGPKG)
	echo "$a" >>"$tmp/ms_world"; echo "$b" >>"$tmp/mf_world"; echo "$c" >>"$tmp/ms_z4"; echo "$d" >>"$tmp/mf_z4"
	echo "$e" >>"$tmp/ms_z8"; echo "$f" >>"$tmp/mf_z8"; echo "$g" >>"$tmp/mf_gpkg"
	printf 'round %d: world  mapserver %15s  mapfarm %13s (from GPKG %13s) | z4  mapserver %13s  mapfarm %11s | z8  mapserver %11s  mapfarm %11s\n' \
		"$r" "${a/ / / }" "${b/ / / }" "${g/ / / }" "${c/ / / }" "${d/ / / }" "${e/ / / }" "${f/ / / }"
done
# report MS MF LABEL: medians of wall and CPU ms of mapserver case MS and mapfarm case MF, and the
# ratios mapserver/mapfarm (>1: mapfarm faster).
report() {
	local msw mfw msc mfc
	msw=$(cut -d' ' -f1 <"$tmp/ms_$1" | median); mfw=$(cut -d' ' -f1 <"$tmp/mf_$2" | median)
	msc=$(cut -d' ' -f2 <"$tmp/ms_$1" | median); mfc=$(cut -d' ' -f2 <"$tmp/mf_$2" | median)
	awk -v n="$3" -v a="$msw" -v b="$mfw" -v c="$msc" -v d="$mfc" 'BEGIN {
		printf "%-22s wall: mapserver %7.2f ms  mapfarm %7.2f ms  ratio %.2fx | CPU: mapserver %7.2f ms  mapfarm %7.2f ms  ratio %.2fx\n", n, a, b, a / b, c, d, c / d }'
}
echo "medians over $rounds rounds (ratio = mapserver / mapfarm; above 1 means mapfarm is faster):"
report world world "world 1024x768 PNG"
report world gpkg "  same, read from GPKG"
report z4 z4 "tile z4 256x256 PNG"
report z8 z8 "tile z8 256x256 PNG"
