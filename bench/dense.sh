#!/usr/bin/env bash
# bench/dense.sh [-quick]: dense parcels, mapfarm beside UMN MapServer 8, in one run (issue 27).
#
# The data: N axis-aligned 48 m squares on a 50 m grid (bench/parcelgen -squares 48 -cell 50;
# N = 1,000,000 covers 50 km × 50 km), with parcel attributes, in a PostGIS table
# (dense_parcels, database mapfarm_bench; COPY, GiST, primary key, ANALYZE) and a GeoPackage
# (with its R-tree), generated once and cached ($MAPFARM_CACHE/bench, the table's row count).
# The style, in both renderers: fill RGB 200 200 150, outline RGB 80 80 80 0.5 px (0.375 pt at
# 96 DPI), no labels. Two views, 1024×768 PNG24 at 96 DPI:
#
#   street  2 km × 1.5 km in the middle of the table (≈1,300 parcels; a pixel is 1.95 m)
#   region  the whole table (a pixel is 65 m: every parcel is smaller than a pixel)
#
# VIEWS="street" (default "street region") draws only those views: many street draws take seconds,
# the region view's MapServer draws take 1.6 s each.
#
# Each is drawn by:
#   mapserver default   map2img from PostGIS, the connection closed after each draw (MapServer's
#                       default), server defaults (parallel plans allowed)
#   mapserver tuned     the same with PROCESSING "CLOSE_CONNECTION=DEFER" (kept connection) and
#                       max_parallel_workers_per_gather=0, jit=off for its session
#   mapserver gpkg      map2img from the GeoPackage (OGR)
#   mapfarm soap/rest   a farm of separate processes (one api, one worker, real Redis, local-disk
#                       store), ExportMapImage over SOAP with the PNG inline and the REST export
#                       route (f=image), end to end: timed to the last byte (bench/densebench)
# MapServer's times are its own per-draw times (map2img -c RUNS+1 with map debug 2: msDrawMap's
# and msSaveImage's total times per draw, the first draw dropped as a warm-up), one process. Every measure is RUNS
# draws after one warm-up: median (min–max); mapfarm's measures are timed in rounds, one request of
# each a round in turning order, after a warm-up request of each, so that the farm's first
# requests weigh on no measure alone (the first measure timed was about 1.2x slower when each
# measure ran its draws in a row). Ratios are the tuned MapServer's median over
# mapfarm's (above 1: mapfarm is faster). Then, unless TILES=0, bench/tiles.sh 4 1 (cached z5
# tiles, nginx beside mapfarm's REST tile route).
#
# -quick: N = 40,000 (10 km × 10 km), RUNS 3, no tiles: for development; its figures are not the
# issue's.
# Needs: Go, PostgreSQL with PostGIS on 127.0.0.1:5432 (user postgres, trust; or
# MAPFARM_BENCH_PG_ADMIN), Redis on 127.0.0.1:6379 (or MAPFARM_BENCH_REDIS), map2img
# (apt-get install mapserver-bin). The load average is printed before and after each part:
# figures from a busy machine are not comparable with a quiet one's, their ratios more so.
set -euo pipefail
N=${N:-1000000}
RUNS=${RUNS:-7}
TILES=${TILES:-1}
VIEWS=${VIEWS:-street region}
if [[ ${1:-} == -quick ]]; then
	N=40000 RUNS=${QUICK_RUNS:-3} TILES=0
fi
root=$(cd "$(dirname "$0")/.." && pwd)
cache=${MAPFARM_CACHE:-$HOME/.cache/mapfarm}/bench
pg_admin=${MAPFARM_BENCH_PG_ADMIN:-"host=127.0.0.1 port=5432 user=postgres dbname=postgres sslmode=disable"}
pg="${pg_admin/dbname=postgres/dbname=mapfarm_bench}"
redis=${MAPFARM_BENCH_REDIS:-127.0.0.1:6379}
table=dense_parcels
gpkg=$cache/dense-parcels-$N.gpkg
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
load() { cut -d' ' -f1-3 /proc/loadavg; }
command -v map2img >/dev/null || { echo "map2img not found: apt-get install mapserver-bin" >&2; exit 1; }

echo "== build (load $(load))"
(cd "$root" && go build -o "$tmp/mapfarm" . && go build -o "$tmp/parcelgen" ./bench/parcelgen &&
	go build -o "$tmp/densebench" ./bench/densebench)

echo "== data: $N parcels, 48 m squares on a 50 m grid"
mkdir -p "$cache"
psql "$pg_admin" -qAtc "SELECT 1 FROM pg_database WHERE datname = 'mapfarm_bench'" | grep -q 1 ||
	psql "$pg_admin" -qc "CREATE DATABASE mapfarm_bench"
have=$(psql "$pg" -qAtc "SELECT count(*) FROM $table" 2>/dev/null || echo 0)
if [[ ! -f $gpkg || $have != "$N" ]]; then
	rm -f "$gpkg"
	"$tmp/parcelgen" -n "$N" -squares 48 -cell 50 -table "$table" -gpkg "$gpkg" -pg "$pg"
else
	echo "cached: $gpkg and table $table ($have rows)"
fi

# The views, from the grid parcelgen fills: side × side cells of 50 m from (ox, oy).
ox=-10915000 oy=3480000
side=$(awk -v n="$N" 'BEGIN { s = int(sqrt(n)); if (s * s < n) s++; print s }')
read -r street region < <(awk -v ox=$ox -v oy=$oy -v s="$side" 'BEGIN {
	size = s * 50; cx = ox + size / 2; cy = oy + size / 2
	hw = size / 2 * 1024 / 768
	printf "%.3f,%.3f,%.3f,%.3f %.3f,%.3f,%.3f,%.3f\n", cx - 1000, cy - 750, cx + 1000, cy + 750, cx - hw, oy, cx + hw, oy + size }')
echo "street view ${street}; region view ${region} (EPSG:3857)"

services=$cache/dense-parcels-$N.services.yaml
cat >"$services" <<YAML
connections:
  bench: {dsnEnv: MAPFARM_BENCH_DSN, statementTimeout: 60s}
services:
$(for svc in pg gpkg; do
	if [[ $svc == pg ]]; then src="{postgis: bench, table: $table, idColumn: gid}"; else src="{geopackage: $gpkg, table: $table}"; fi
	cat <<EOF
  - name: dense_$svc
    maps:
      - name: Layers
        spatialReference: 3857
        layers:
          - id: 0
            name: Parcels
            geometryType: polygon
            source: $src
            displayField: parcel_id
            renderer:
              type: simple
              symbol: {type: simpleFill, style: solid, color: [200, 200, 150], outline: {color: [80, 80, 80], width: 0.375}}
EOF
done)
YAML
# For profiling in process (internal/mapdraw BenchmarkDense): the services and the views.
printf 'services=%s\nstreet=%s\nregion=%s\n' "$services" "$street" "$region" >"$cache/dense-parcels-$N.env"
export MAPFARM_BENCH_DSN=$pg MAPFARM_SERVICES=$services MAPFARM_REDIS_ADDR=$redis MAPFARM_STORE=disk \
	MAPFARM_STORE_DIR=$tmp/store MAPFARM_LOG_LEVEL=warn
# start ROLE PORT: starts a farm process and waits for /readyz.
start() {
	local role=$1 port=$2
	if [[ $role == api ]]; then
		MAPFARM_LISTEN=127.0.0.1:$port "$tmp/mapfarm" api >"$tmp/$role.log" 2>&1 &
	else
		MAPFARM_METRICS_LISTEN=127.0.0.1:$port "$tmp/mapfarm" worker >"$tmp/$role.log" 2>&1 &
	fi
	pids+=($!)
	for _ in $(seq 1 300); do
		curl -fs "http://127.0.0.1:$port/readyz" >/dev/null && return
		sleep 0.05
	done
	echo "$role did not get ready; log:" >&2
	cat "$tmp/$role.log" >&2
	exit 1
}

# mapfile NAME CONNECTIONTYPE CONNECTION DATA [PROCESSING…]: a map file of the same style.
mapfile() {
	local name=$1 ctype=$2 conn=$3 data=$4
	shift 4
	{
		cat <<EOF
MAP
  NAME "dense"
  SIZE 1024 768
  UNITS METERS
  IMAGECOLOR 255 255 255
  DEBUG 2
  CONFIG "MS_ERRORFILE" "stderr"
  PROJECTION "init=epsg:3857" END
  OUTPUTFORMAT NAME "png24" DRIVER "AGG/PNG" MIMETYPE "image/png" IMAGEMODE RGB EXTENSION "png" END
  LAYER
    NAME "parcels"
    TYPE POLYGON
    STATUS ON
    CONNECTIONTYPE $ctype
    CONNECTION "$conn"
    DATA "$data"
EOF
		for p in "$@"; do echo "    PROCESSING \"$p\""; done
		cat <<EOF
    PROJECTION "init=epsg:3857" END
    CLASS
      STYLE COLOR 200 200 150 OUTLINECOLOR 80 80 80 WIDTH 0.5 END
    END
  END
END
EOF
	} >"$tmp/$name.map"
}
mapfile ms_default POSTGIS "$pg" "geom FROM $table USING UNIQUE gid USING SRID=3857"
mapfile ms_tuned POSTGIS "$pg options='-c max_parallel_workers_per_gather=0 -c jit=off'" \
	"geom FROM $table USING UNIQUE gid USING SRID=3857" "CLOSE_CONNECTION=DEFER"
mapfile ms_gpkg OGR "$gpkg" "$table"

# mapserver NAME BOX: "median min max" ms of RUNS draws (after one) in one map2img process.
mapserver() {
	local name=$1
	# shellcheck disable=SC2046 # the extent is four words
	map2img -m "$tmp/$name.map" -o "$tmp/$name.png" -e $(tr , ' ' <<<"$2") -c $((RUNS + 1)) 2>"$tmp/$name.log" >/dev/null || {
		echo "map2img $name failed:" >&2
		tail -5 "$tmp/$name.log" >&2
		exit 1
	}
	# A draw's time: msDrawMap's total (query, drawing) plus msSaveImage's (PNG encoding).
	awk '/msDrawMap\(\) total time:/ { d = $NF + 0 } /msSaveImage\(.*total time:/ { print (d + $NF) * 1000 }' "$tmp/$name.log" | tail -n +2 | sort -g |
		awk '{ v[NR] = $1 } END { if (NR == 0) { print "no timings" > "/dev/stderr"; exit 1 } printf "%.1f %.1f %.1f\n", v[int((NR + 1) / 2)], v[1], v[NR] }'
}

echo "== farm: api + worker (separate processes, real Redis $redis)"
start api 18090
start worker 18091

: >"$tmp/results"
for v in $VIEWS; do
	box=$street
	[[ $v == region ]] && box=$region
	echo "== $v view: $RUNS draws each after one warm-up (load before $(load))"
	for ms in ms_default ms_tuned ms_gpkg; do
		read -r med lo hi < <(mapserver "$ms" "$box")
		echo "$ms - $v $med $lo $hi" >>"$tmp/results"
	done
	"$tmp/densebench" -url http://127.0.0.1:18090 -services dense_pg,dense_gpkg -views "$v=$box" -runs "$RUNS" >>"$tmp/results"
	echo "   (load after $(load))"
done

python3 - "$tmp/results" "$VIEWS" <<'EOF'
import sys
rows = [l.split() for l in open(sys.argv[1])]
names = {"ms_default": "MapServer 8, PostGIS, default", "ms_tuned": "MapServer 8, PostGIS, tuned",
         "ms_gpkg": "MapServer 8, GeoPackage (OGR)", "dense_pg": "mapfarm, PostGIS", "dense_gpkg": "mapfarm, GeoPackage"}
for view in sys.argv[2].split():
    rs = [r for r in rows if r[2] == view]
    tuned = next(float(r[3]) for r in rs if r[0] == "ms_tuned")
    pg = next(float(r[3]) for r in rs if r[0] == "dense_pg" and r[1] == "soap")
    print(f"{view}: median ms (min-max); ratio = tuned MapServer / this (above 1: faster than tuned MapServer)")
    for r in rs:
        what = names[r[0]] + ("" if r[1] == "-" else ", " + r[1].upper())
        extra = ""
        if r[0] == "dense_gpkg" and r[1] == "soap":
            extra = f"  GeoPackage / PostGIS {float(r[3]) / pg:.2f}x"
        print(f"  {what:<36} {float(r[3]):>9.1f} ({float(r[4]):.1f}-{float(r[5]):.1f})  ratio {tuned / float(r[3]):5.2f}x{extra}")
EOF
echo "load after: $(load)"

if [[ $TILES == 1 ]]; then
	echo "== cached tiles: bench/tiles.sh 4 1"
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	pids=()
	# Its own farm on the sample services: none of this run's settings.
	env -u MAPFARM_SERVICES -u MAPFARM_REDIS_ADDR -u MAPFARM_STORE -u MAPFARM_STORE_DIR -u MAPFARM_LOG_LEVEL \
		-u MAPFARM_BENCH_DSN bash "$root/bench/tiles.sh" 4 1
fi
