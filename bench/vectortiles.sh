#!/usr/bin/env bash
# bench/vectortiles.sh: vector tiles of the 1M-parcel PostGIS table, mapfarm beside tegola v0.21.2
# and PostGIS's own ST_AsMVT, in one run (issue 28's targets).
#
# The data: bench/dense.sh's table dense_parcels (database mapfarm_bench: 1,000,000 48 m squares
# on a 50 m grid, 50 km × 50 km), made under `flock /tmp/dense-data.lock` when it is missing.
# Both servers read the same columns (gid as the feature id; parcel_id, land_use,
# assessed_value), extent 4096, buffer 64, and send the tiles gzipped.
#
#   floor      bench/vtpostgis -z 14: PostGIS's ST_AsMVT(ST_AsMVTGeom(...)) for a z14 tile, one
#              query at a time on one connection (and the worker's read and read + encode beside
#              it, with the worker's CPU time), medians over 4×4 tiles × 3 rounds
#   ondemand   z14 tiles (about 2,650 parcels each) of the middle of the table, 8 clients
#              (bench/vtload), each tile asked once: tegola serve (no cache), then mapfarm's
#              VectorTileServer (`mapfarm serve`, embedded Redis, disk store), in ROUNDS rounds
#              (at most 4) of 100 new tiles each, whose order turns; tiles/s, bytes on the wire
#              (gzip) and inflated (the MVT), and each server process's CPU ms a tile (its
#              database's not counted)
#   seed       levels LEVELS (default 14: tegola's 484 tiles; z13 would add 132 tiles at about four
#              times the cost each to tegola's side) over the whole table, or over SEED_Z12's
#              block of z12 tiles (COLS/ROWS, e.g. 934-935/1690-1691: 2 × 2 tiles in the table's
#              middle, z13 and z14 metatiles aligned with it; default: the table): `tegola cache seed`
#              (file cache) once for each of TEGOLA_CONCURRENCY (default "2": `--concurrency 2`;
#              "default" runs it without the flag: one per CPU) and `cachetool seed -format pbf`
#              with two render slots (MAPFARM_WORKER_CONCURRENCY=2), in SEED_ROUNDS rounds
#              (default 1) whose order turns (SEED_FIRST=mapfarm: mapfarm first in round 1),
#              each bounded by SEED_TIMEOUT (default 60m; a tegola seed stopped there is counted
#              and flagged STOPPED). MINZOOM (default 0) is the parcels layer's first
#              zoom in both configurations (tegola's map layer `min_zoom`, mapfarm's
#              `vectorTiles: {minZoom}`): `LEVELS=0-14 MINZOOM=12` seeds z0-14 as an operator
#              would, with the 1M parcels left out of z0-11. Tiles/s of each are counted two
#              ways: over the tiles of the area (the same tile set for both: per zoom, the
#              tiles the area touches) and over the tiles each wrote with data, the empty ones
#              apart on both sides (tegola writes every tile, an empty one as an empty file;
#              mapfarm seeds whole 4×4 metatiles, so it may write tiles of the metatiles past
#              the area, and stores no empty tile: skipEmpty, its job's "empty (skipped)"). A
#              mapfarm job that ends done with failed tiles is flagged FAILED: not a whole seed
#   cached     the seeded z14 vector tiles (25) and seeded raster tiles of the same ground (level 15
#              of the map's 256-px cache, the same resolution: 4 raster tiles a vector tile, 100)
#              from mapfarm, after a warm-up pass over every path, in ROUNDS rounds whose order
#              turns. CACHED_CLIENTS (default "wrk"): "wrk" runs `wrk -t1 -c32` for CACHED_SECS
#              (default 8) over each set's paths (a Lua script cycles them; `Accept-Encoding:
#              gzip` on the vector route, as browsers send it), as bench/tiles.sh does: tiles/s,
#              bytes a response (headers included), p99, the server process's CPU µs a request
#              (user and system apart) and wrk's own; "vtload" adds 8 Go clients (bench/vtload)
#              that do not inflate what they get, CACHED_PASSES × 100 requests of each.
#              VT_SAVE=DIR keeps the 25 gzipped vector tiles in DIR
#
# PARTS (default "floor ondemand seed cached") runs some of them. Ratios: mapfarm's tiles/s over
# tegola's (above 1: mapfarm is faster), mapfarm's bytes over tegola's. The load average is printed
# before and after each part: on the shared 2-core machine the rates move with it; the CPU times,
# and the ratios (both sides of one run in turn), less so.
#
#   bash bench/vectortiles.sh                          # ROUNDS=3 LEVELS=14, about 12 minutes
#   PARTS=seed LEVELS=0-14 MINZOOM=12 SEED_Z12=934-935/1690-1691 TEGOLA_CONCURRENCY="default 2" bash bench/vectortiles.sh
#   ROUNDS=2 PARTS="ondemand cached" bash bench/vectortiles.sh
#   ROUNDS=5 PARTS=cached bash bench/vectortiles.sh        # no tegola: neither built nor started
#
# Needs: Go, PostgreSQL with PostGIS on 127.0.0.1:5432 (user postgres, trust; or
# MAPFARM_BENCH_PG_ADMIN); wrk for the cached part (installed from apt when missing). tegola v0.21.2 is built once into $MAPFARM_CACHE/bin (the module proxy
# serves the version but not the module's version list, so `go install` fails; it is built from
# `go mod download`).
set -euo pipefail
ROUNDS=${ROUNDS:-3}
LEVELS=${LEVELS:-14}
MINZOOM=${MINZOOM:-0}
SEED_Z12=${SEED_Z12:-}
SEED_ROUNDS=${SEED_ROUNDS:-1}
SEED_TIMEOUT=${SEED_TIMEOUT:-60m}
SEED_FIRST=${SEED_FIRST:-tegola}
TEGOLA_CONCURRENCY=${TEGOLA_CONCURRENCY:-2}
CACHED_PASSES=${CACHED_PASSES:-100}
CACHED_SECS=${CACHED_SECS:-8}
CACHED_CLIENTS=${CACHED_CLIENTS:-wrk}
PARTS=${PARTS:-floor ondemand seed cached}
has() { [[ " $PARTS " == *" $1 "* ]]; }
N=1000000
root=$(cd "$(dirname "$0")/.." && pwd)
mcache=${MAPFARM_CACHE:-$HOME/.cache/mapfarm}
pg_admin=${MAPFARM_BENCH_PG_ADMIN:-"host=127.0.0.1 port=5432 user=postgres dbname=postgres sslmode=disable"}
pg="${pg_admin/dbname=postgres/dbname=mapfarm_bench}"
table=dense_parcels
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
load() { cut -d' ' -f1-3 /proc/loadavg; }

if has cached && [[ " $CACHED_CLIENTS " == *" wrk "* ]] && ! command -v wrk >/dev/null; then
	apt-get install -y wrk >/dev/null
fi
echo "== build (load $(load))"
(cd "$root" && go build -o "$tmp/mapfarm" . && go build -o "$tmp/cachetool" ./cachetool &&
	go build -o "$tmp/vtload" ./bench/vtload && go build -tags proj,nomsgpack -o "$tmp/vtpostgis" ./bench/vtpostgis &&
	go build -o "$tmp/parcelgen" ./bench/parcelgen)
tegola=$mcache/bin/tegola-v0.21.2
# Only the on-demand and seeding parts run tegola: the others neither build nor start it.
need_tegola=false
if has ondemand || has seed; then need_tegola=true; fi
mkdir -p "$mcache/bin"
# One build at a time (two runs of this script at once built into the same file), checked again
# under the lock; the binary is written beside its name and renamed into place whole.
exec {tegola_lock}>"$mcache/bin/.tegola.lock"
flock "$tegola_lock"
if $need_tegola && [[ ! -x $tegola ]]; then
	echo "== building tegola v0.21.2 into $tegola"
	dir=$(cd "$tmp" && GOFLAGS=-mod=mod go mod download -json github.com/go-spatial/tegola@v0.21.2 | python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])')
	cp -r "$dir" "$tmp/tegola-src" && chmod -R u+w "$tmp/tegola-src"
	(cd "$tmp/tegola-src" && GOFLAGS=-mod=mod go build -o "$tegola.tmp.$$" ./cmd/tegola) && mv "$tegola.tmp.$$" "$tegola"
fi
flock -u "$tegola_lock"
exec {tegola_lock}>&-

echo "== data: $N parcels in $table"
psql "$pg_admin" -qAtc "SELECT 1 FROM pg_database WHERE datname = 'mapfarm_bench'" | grep -q 1 ||
	psql "$pg_admin" -qc "CREATE DATABASE mapfarm_bench" || true
have=$(psql "$pg" -qAtc "SELECT count(*) FROM $table" 2>/dev/null || echo 0)
if [[ $have != "$N" ]]; then
	# The dense-render bench makes the same table (and its GeoPackage): one of us at a time.
	# shellcheck disable=SC2016 # expanded by the inner shell
	flock /tmp/dense-data.lock bash -c '
		have=$(psql "$1" -qAtc "SELECT count(*) FROM $2" 2>/dev/null || echo 0)
		gpkg=$4/bench/dense-parcels-$3.gpkg
		if [[ $have != "$3" || ! -f $gpkg ]]; then
			mkdir -p "$4/bench" && rm -f "$gpkg"
			"$5" -n "$3" -squares 48 -cell 50 -table "$2" -gpkg "$gpkg" -pg "$1"
		fi' _ "$pg" "$table" "$N" "$mcache" "$tmp/parcelgen"
fi

# The table's grid (bench/parcelgen): 1000 × 1000 cells of 50 m from (ox, oy).
ox=-10915000 oy=3480000 size=50000
# The seeding area, in both systems: the table, or SEED_Z12's block of z12 tiles shrunk by 1 m
# (no neighbouring tile touched); in degrees too for tegola's --bounds (it takes no other system's bounds).
read -r sx0 sy0 sx1 sy1 < <(python3 -c "
w = 20037508.342789244; t = 2 * w / 2**12
a = '$SEED_Z12'
if not a:
    print($ox, $oy, $ox + $size, $oy + $size)
else:
    (c0, c1), (r0, r1) = [map(int, p.split('-')) for p in a.split('/')]
    print('%.3f %.3f %.3f %.3f' % (c0 * t - w + 1, w - (r1 + 1) * t + 1, (c1 + 1) * t - w - 1, w - r0 * t - 1))")
seed_extent="$sx0,$sy0,$sx1,$sy1"
seed_lonlat=$(python3 -c "
import math
ll = lambda x, y: (math.degrees(x / 6378137), math.degrees(2 * math.atan(math.exp(y / 6378137)) - math.pi / 2))
a, b = ll($sx0, $sy0), ll($sx1, $sy1)
print('%.7f,%.7f,%.7f,%.7f' % (a[0], a[1], b[0], b[1]))")
# z14 tiles wholly inside the table: columns 3730-3749, rows 6749-6768 (20 × 20). Warm-up: row 6748.
x0=3730 x1=3749 y0=6749

if has floor; then
	echo "== floor: ST_AsMVT alone, z14 (load $(load))"
	"$tmp/vtpostgis" -pg "$pg" -table $table -z 14 -tiles 4 -runs 3 | tee "$tmp/floor"
fi

echo "== servers (load $(load))"
# Free ports of this run: helpers on one machine run this script at the same time, and a fixed port
# would find another run's server (or another run's admin credential file) there.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
tport=$(free_port) mport=$(free_port)
cat >"$tmp/tegola.toml" <<EOF
[webserver]
port = "127.0.0.1:$tport"

[cache]
type = "file"
basepath = "$tmp/tegola-cache"

[[providers]]
name = "bench"
type = "postgis"
uri = "postgres://postgres@127.0.0.1:5432/mapfarm_bench?sslmode=disable"
srid = 3857
max_connections = 16

  [[providers.layers]]
  name = "Parcels"
  geometry_fieldname = "geom"
  id_fieldname = "gid"
  srid = 3857
  sql = "SELECT gid, parcel_id, land_use, assessed_value, ST_AsBinary(geom) AS geom FROM $table WHERE geom && !BBOX!"

[[maps]]
name = "dense"

  [[maps.layers]]
  provider_layer = "bench.Parcels"
  min_zoom = $MINZOOM
  max_zoom = 14
EOF
cat >"$tmp/services.yaml" <<EOF
connections:
  bench: {dsnEnv: MAPFARM_BENCH_DSN, statementTimeout: 60s}
services:
  - name: dense_pg
    maps:
      - name: Layers
        spatialReference: 3857
        cache: {scheme: webMercator, maxLevel: 15, format: PNG, storage: compactV2}
        layers: &parcels
          - id: 0
            name: Parcels
            geometryType: polygon
            source: {postgis: bench, table: $table, idColumn: gid}
            fields: [gid, parcel_id, land_use, assessed_value]
            displayField: parcel_id
            vectorTiles: {fields: [parcel_id, land_use, assessed_value], minZoom: $MINZOOM}
            renderer:
              type: simple
              symbol: {type: simpleFill, style: solid, color: [200, 200, 150], outline: {color: [80, 80, 80], width: 0.375}}
  # The same map with a 512-px raster cache (the same resolution a level, so twice the ground a
  # tile): its level 15 is the vector tiles' z14 grid, ground and resolution, tile for tile (the
  # cached part's third route).
  - name: dense_pg512
    maps:
      - name: Layers
        spatialReference: 3857
        cache: {scheme: webMercator, tileSize: 512, maxLevel: 15, format: PNG, storage: compactV2}
        layers: *parcels
EOF
export MAPFARM_BENCH_DSN=$pg MAPFARM_SERVICES=$tmp/services.yaml MAPFARM_STORE=disk MAPFARM_STORE_DIR=$tmp/store \
	MAPFARM_STATE_DIR=$tmp/state MAPFARM_LOG_LEVEL=warn MAPFARM_LISTEN=127.0.0.1:$mport MAPFARM_WORKER_CONCURRENCY=2
unset MAPFARM_REDIS_ADDR
# tegola serve caches nothing (the seeding config's [cache] is left out). It runs at the normal
# priority, while mapfarm's on-demand builds run at nice 10 (api.Admission.TileBuild): on a
# shared machine that favours tegola. TEGOLA_NICE=10 puts both at the same priority.
sed '/^\[cache\]/,/^basepath/d' "$tmp/tegola.toml" >"$tmp/tegola-serve.toml"
tegola_pid=
if $need_tegola; then
	nice -n "${TEGOLA_NICE:-0}" "$tegola" serve --config "$tmp/tegola-serve.toml" >"$tmp/tegola.log" 2>&1 &
	tegola_pid=$!
	pids+=("$tegola_pid")
fi
"$tmp/mapfarm" serve >"$tmp/mapfarm.log" 2>&1 &
mapfarm_pid=$!
pids+=("$mapfarm_pid")
ready() {
	for _ in $(seq 1 600); do
		curl -fs -o /dev/null "$1" && return
		sleep 0.1
	done
	echo "$2 did not get ready; log:" >&2
	tail -20 "$tmp/$2.log" >&2
	exit 1
}
if $need_tegola; then ready http://127.0.0.1:$tport/capabilities tegola; fi
ready http://127.0.0.1:$mport/readyz mapfarm
teg_url='http://127.0.0.1:'$tport'/maps/dense/{z}/{x}/{y}.pbf'
mf_url='http://127.0.0.1:'$mport'/arcgis/rest/services/dense_pg/VectorTileServer/tile/{z}/{y}/{x}.pbf'
# cpu PID: the CPU time (user + system) of a process so far, in ms; cpusys PID: its user and
# system times apart.
cpu() { awk -v t="$(getconf CLK_TCK)" '{ print ($14 + $15) * 1000 / t }' "/proc/$1/stat"; }
cpusys() { awk -v t="$(getconf CLK_TCK)" '{ print $14 * 1000 / t, $15 * 1000 / t }' "/proc/$1/stat"; }
# vtload NAME PID URL BLOCK [ARGS...]: one load of the server PID, its line kept under NAME with
# the server process's CPU ms a tile (not its database's).
vtload() {
	local name=$1 pid=$2 url=$3 block=$4 c0 line
	shift 4
	c0=$(cpu "$pid")
	line=$("$tmp/vtload" -url "$url" -tiles "$block" "$@")
	line="$line cpu $(awk -v a="$c0" -v b="$(cpu "$pid")" -v n="$(cut -d' ' -f2 <<<"$line")" 'BEGIN { printf "%.3f", (b - a) / n }')"
	echo "$name $line" | tee -a "$tmp/results"
}
: >"$tmp/results"
has ondemand && echo "== warm-up: row 6748 from both (load $(load))" &&
	"$tmp/vtload" -url "$teg_url" -tiles "14/$x0-$x1/6748-6748" >/dev/null &&
	"$tmp/vtload" -url "$mf_url" -tiles "14/$x0-$x1/6748-6748" >/dev/null

for r in $(seq 0 $((ROUNDS - 1))); do
	has ondemand || break
	# 100 tiles a round, none asked before (mapfarm keeps what it built for a minute).
	ya=$((y0 + 5 * (r % 4))) block_x0=$x0 block_x1=$x1
	if ((r >= 4)); then echo "at most 4 rounds of new tiles" >&2 && break; fi
	block="14/$block_x0-$block_x1/$ya-$((ya + 4))"
	echo "== on demand, round $((r + 1)): $block, 8 clients (load $(load))"
	if ((r % 2 == 0)); then
		vtload tegola "$tegola_pid" "$teg_url" "$block" -clients 8
		vtload mapfarm "$mapfarm_pid" "$mf_url" "$block" -clients 8
	else
		vtload mapfarm "$mapfarm_pid" "$mf_url" "$block" -clients 8
		vtload tegola "$tegola_pid" "$teg_url" "$block" -clients 8
	fi
done

if has seed; then
lo=${LEVELS%-*} hi=${LEVELS#*-}
# The tiles of the area at each zoom (those it touches), the set both servers are asked for.
area_tiles=$(python3 -c "
import math
w = 20037508.342789244
n = 0
for z in range($lo, $hi + 1):
    t = 2 * w / 2**z
    c = lambda v: int(math.floor(v / t))
    n += (c($sx1 + w) - c($sx0 + w) + 1) * (c(w - $sy0) - c(w - $sy1) + 1)
print(n)")
# seed_tegola NAME [FLAGS...]: one `tegola cache seed` into an empty file cache; its line gives
# the files written and how many of them hold no layer (an MVT of no bytes, gzipped or not).
seed_tegola() {
	local name=$1 start end rc
	shift
	rm -rf "$tmp/tegola-cache"
	echo "   $name: tegola cache seed $* (load $(load))"
	start=$(date +%s.%N)
	rc=0
	timeout "$SEED_TIMEOUT" "$tegola" cache seed --config "$tmp/tegola.toml" --map dense --bounds "$seed_lonlat" \
		--min-zoom "$lo" --max-zoom "$hi" "$@" --overwrite >"$tmp/tegola-seed.log" 2>&1 || rc=$?
	end=$(date +%s.%N)
	if ((rc == 124)); then
		echo "   $name: stopped at the $SEED_TIMEOUT bound; the tiles written so far are counted" >&2
	elif ((rc != 0)); then
		tail -5 "$tmp/tegola-seed.log" >&2
		exit 1
	fi
	# Files by zoom (the cache's <map>/<z>/<x>/<y>) to the log, for checking against the area's tiles.
	read -r files empty < <(python3 -c "
import collections, gzip, os, sys
n = e = 0
z = collections.Counter()
for d, _, fs in os.walk(sys.argv[1]):
    for f in fs:
        b = open(os.path.join(d, f), 'rb').read()
        n += 1
        e += len(gzip.decompress(b) if b[:2] == b'\\x1f\\x8b' else b) == 0
        p = os.path.relpath(d, sys.argv[1]).split(os.sep)
        z[int(p[1]) if len(p) > 1 and p[1].isdigit() else -1] += 1
print(n, e)
print('   files by zoom:', ' '.join('z%d %d' % kv for kv in sorted(z.items())), file=sys.stderr)" "$tmp/tegola-cache")
	# tiles: the tiles holding data (non-empty), counted as mapfarm's "rendered" are.
	echo "$name tiles $((files - empty)) empty $empty failed 0 stopped $((rc == 124)) area $area_tiles seconds $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }')" | tee -a "$tmp/results"
}
seed_mapfarm() {
	local start end line
	echo "   mapfarm: cachetool seed -format pbf -levels $lo-$hi, 2 render slots (load $(load))"
	start=$(date +%s.%N)
	"$tmp/cachetool" seed -server http://127.0.0.1:$mport -service dense_pg -format pbf -levels "$lo-$hi" \
		-extent "$seed_extent" -timeout "$SEED_TIMEOUT" >"$tmp/mapfarm-seed.log" 2>&1 || { tail -5 "$tmp/mapfarm-seed.log" >&2; exit 1; }
	end=$(date +%s.%N)
	# "tiles: T total, R rendered, E empty (skipped), K kept, F failed": R tiles stored, E empty
	# ones left out, F failed (a job ends done with failures within its budget: not a whole seed).
	line=$(grep -E 'tiles: [0-9]+ total' "$tmp/mapfarm-seed.log" | tail -1)
	echo "seed-mapfarm tiles $(grep -oE '[0-9]+ rendered' <<<"$line" | cut -d' ' -f1) empty $(grep -oE '[0-9]+ empty' <<<"$line" | cut -d' ' -f1) failed $(grep -oE '[0-9]+ failed' <<<"$line" | cut -d' ' -f1) stopped 0 area $area_tiles seconds $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }')" | tee -a "$tmp/results"
	grep -E 'tiles:|rate' "$tmp/mapfarm-seed.log" | tail -2
}
seed_tegolas() {
	local c
	for c in $TEGOLA_CONCURRENCY; do
		if [[ $c == default ]]; then seed_tegola seed-tegola-default; else seed_tegola "seed-tegola-c$c" --concurrency "$c"; fi
	done
}
first=0
[[ $SEED_FIRST == mapfarm ]] && first=1
echo "== seeding levels $LEVELS over $seed_extent ($area_tiles tiles of the area), parcels from zoom $MINZOOM (load $(load))"
for r in $(seq 1 "$SEED_ROUNDS"); do
	echo "   seeding round $r"
	if (((r + first) % 2 == 1)); then seed_tegolas && seed_mapfarm; else seed_mapfarm && seed_tegolas; fi
done
fi

if has cached; then
echo "== cached: seeded z14 vector tiles and level-15 raster tiles of the same 5 × 5 z14 tiles (load $(load))"
# The raster cache of the same ground: z14 tiles x0..x0+4, y0..y0+4 are level-15 tiles 2x0.. and 2y0...
rext=$(python3 -c "
w = 20037508.342789244; t = 2 * w / 2**14
print('%.3f,%.3f,%.3f,%.3f' % ($x0 * t - w + 1, w - ($y0 + 5) * t + 1, ($x0 + 5) * t - w - 1, w - $y0 * t - 1))")
"$tmp/cachetool" seed -server http://127.0.0.1:$mport -service dense_pg -levels 15 -extent "$rext" >"$tmp/raster-seed.log" 2>&1 ||
	{ tail -5 "$tmp/raster-seed.log" >&2; exit 1; }
"$tmp/cachetool" seed -server http://127.0.0.1:$mport -service dense_pg512 -levels 15 -extent "$rext" >"$tmp/raster512-seed.log" 2>&1 ||
	{ tail -5 "$tmp/raster512-seed.log" >&2; exit 1; }
if ! has seed; then
	"$tmp/cachetool" seed -server http://127.0.0.1:$mport -service dense_pg -format pbf -levels 14 -extent "$rext" >"$tmp/mapfarm-seed.log" 2>&1 ||
		{ tail -5 "$tmp/mapfarm-seed.log" >&2; exit 1; }
fi
vblock="14/$x0-$((x0 + 4))/$y0-$((y0 + 4))"
rblock="15/$((2 * x0))-$((2 * x0 + 9))/$((2 * y0))-$((2 * y0 + 9))"
mf_raster='http://127.0.0.1:'$mport'/arcgis/rest/services/dense_pg/MapServer/tile/{z}/{y}/{x}'
# The paths wrk cycles through: the 25 vector tiles, the 100 256-px raster tiles of the same
# ground, and the 25 512-px raster tiles of the same grid.
: >"$tmp/vector.paths"
: >"$tmp/raster.paths"
: >"$tmp/raster512.paths"
for dy in 0 1 2 3 4; do for dx in 0 1 2 3 4; do
	echo "/arcgis/rest/services/dense_pg/VectorTileServer/tile/14/$((y0 + dy))/$((x0 + dx)).pbf" >>"$tmp/vector.paths"
	echo "/arcgis/rest/services/dense_pg512/MapServer/tile/15/$((y0 + dy))/$((x0 + dx))" >>"$tmp/raster512.paths"
done; done
for dy in $(seq 0 9); do for dx in $(seq 0 9); do
	echo "/arcgis/rest/services/dense_pg/MapServer/tile/15/$((2 * y0 + dy))/$((2 * x0 + dx))" >>"$tmp/raster.paths"
done; done
cat >"$tmp/paths.lua" <<'LUA'
local paths = {}
for line in io.lines(os.getenv("TILE_PATHS")) do paths[#paths + 1] = line end
local headers = {}
if os.getenv("TILE_GZIP") == "1" then headers["Accept-Encoding"] = "gzip" end
local i = 0
request = function()
	i = i % #paths + 1
	return wrk.format("GET", paths[i], headers)
end
LUA
# wrkrun NAME PATHS GZIP: wrk -t1 -c32 for CACHED_SECS over the paths (a C client: far less CPU
# a request than vtload's Go clients), the line kept under NAME with tiles/s, bytes read a
# response (headers included) and the server process's CPU µs a request.
wrkrun() {
	local name=$1 paths=$2 gz=$3 c0 c1 out
	c0=$(cpusys "$mapfarm_pid")
	# wrk's own CPU time (user + system, in ms) is printed last, by its parent (a python3 that
	# reads its child's rusage).
	out=$(TILE_PATHS=$paths TILE_GZIP=$gz python3 -c '
import resource, subprocess, sys
subprocess.run(sys.argv[1:], check=True)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print("wrkcpu", (r.ru_utime + r.ru_stime) * 1000)' wrk -t1 -c32 -d"${CACHED_SECS}s" --latency -s "$tmp/paths.lua" http://127.0.0.1:$mport)
	c1=$(cpusys "$mapfarm_pid")
	if grep -q 'Non-2xx' <<<"$out"; then echo "$name: $(grep 'Non-2xx' <<<"$out")" >&2; fi
	python3 "$tmp/wrkparse.py" "$name" "$c0" "$c1" <<<"$out" | tee -a "$tmp/results"
}
# wrk's summary as a results line: rate (tiles/s), wire (bytes read a response), p99 (ms), cpu
# (the server's CPU µs a request, from its user and system CPU ms before and after: "U S"), usr
# and sys (its parts), wrkcpu (wrk's own CPU µs a request).
cat >"$tmp/wrkparse.py" <<'PY'
import re, sys
t = sys.stdin.read()
name = sys.argv[1]
(u0, s0), (u1, s1) = [map(float, a.split()) for a in sys.argv[2:4]]
c0, c1 = u0 + s0, u1 + s1
wrkcpu = float(re.search(r"^wrkcpu ([\d.]+)", t, re.M).group(1))
reqs = int(re.search(r"(\d+) requests in", t).group(1))
v, unit = re.search(r"(\d+(?:\.\d+)?)([KMG]?B) read", t).groups()
read = float(v) * {"B": 1, "KB": 1024, "MB": 1024**2, "GB": 1024**3}[unit]
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", t).group(1))
p, u = re.search(r"^\s+99%\s+([\d.]+)(us|ms|s)\s*$", t, re.M).groups()
p99 = float(p) * {"us": 0.001, "ms": 1, "s": 1000}[u]
n = max(reqs, 1)
print(f"{name} rate {rps:.0f} wire {read / n:.0f} p99 {p99:.2f} cpu {(c1 - c0) * 1000 / n:.1f} usr {(u1 - u0) * 1000 / n:.1f}"
      f" sys {(s1 - s0) * 1000 / n:.1f} wrkcpu {wrkcpu * 1000 / n:.1f} requests {reqs}")
PY
# Warm-up: every path once. VT_SAVE=DIR keeps the gzipped vector tiles there (to compare encodings).
for p in "$tmp/vector.paths" "$tmp/raster.paths" "$tmp/raster512.paths"; do
	while read -r u; do
		out=/dev/null
		[[ -n ${VT_SAVE:-} && $u == *.pbf ]] && mkdir -p "$VT_SAVE" && out=$VT_SAVE/$(basename "$(dirname "$u")")-$(basename "$u").gz
		curl -fs -o "$out" -H 'Accept-Encoding: gzip' "http://127.0.0.1:$mport$u"
	done <"$p"
done
for r in $(seq 1 "$ROUNDS"); do
	echo "   round $r (load $(load))"
	if [[ " $CACHED_CLIENTS " == *" wrk "* ]]; then
		if ((r % 2 == 1)); then
			wrkrun wrk-vector "$tmp/vector.paths" 1
			wrkrun wrk-raster "$tmp/raster.paths" 0
			wrkrun wrk-raster512 "$tmp/raster512.paths" 0
		else
			wrkrun wrk-raster512 "$tmp/raster512.paths" 0
			wrkrun wrk-raster "$tmp/raster.paths" 0
			wrkrun wrk-vector "$tmp/vector.paths" 1
		fi
	fi
	if [[ " $CACHED_CLIENTS " == *" vtload "* ]]; then
		# The vector block has 25 tiles, the raster one 100: the same number of requests each.
		vtload cached-vector "$mapfarm_pid" "$mf_url" "$vblock" -clients 8 -passes $((CACHED_PASSES * 4)) -inflate=false
		vtload cached-raster "$mapfarm_pid" "$mf_raster" "$rblock" -clients 8 -passes "$CACHED_PASSES" -inflate=false
	fi
done
fi
echo "load after: $(load)"

python3 - "$tmp/results" "$tmp/floor" <<'EOF'
import os, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    w = line.split()
    d = dict(zip(w[1::2], w[2::2]))
    rows.setdefault(w[0], []).append({k: float(v) for k, v in d.items()})
def med(name, key):
    vs = [r[key] for r in rows[name]]
    return statistics.median(vs), min(vs), max(vs)
floor = [l.split() for l in open(sys.argv[2]) if l.split()[:1] == ["14"]] if os.path.exists(sys.argv[2]) else []
if floor:
    f = floor[0]
    print(f"floor: ST_AsMVT {f[2]} ms a z14 tile alone ({f[5]} B, {f[7]} features); worker read {f[3]} ms, read + encode {f[4]} ms ({f[6]} B, {f[8]} ms CPU)")
if "tegola" in rows:
    print(f"on demand z14, 8 clients, median (min-max) of {len(rows['tegola'])} rounds:")
    for name in ("tegola", "mapfarm"):
        r, b, w, c = med(name, "rate"), med(name, "raw"), med(name, "wire"), med(name, "cpu")
        print(f"  {name:<8} {r[0]:8.2f} tiles/s ({r[1]:.2f}-{r[2]:.2f})  {b[0]:9.0f} B MVT  {w[0]:8.0f} B gzip  p50 {med(name, 'p50')[0]:.0f} ms"
              f"  server CPU {c[0]:.1f} ms a tile ({c[1]:.1f}-{c[2]:.1f})")
    t, m = med("tegola", "rate")[0], med("mapfarm", "rate")[0]
    print(f"  ratio mapfarm/tegola: {m / t:.2f}x tiles/s (target >= 2), bytes {med('mapfarm', 'raw')[0] / med('tegola', 'raw')[0]:.3f} MVT,"
          f" {med('mapfarm', 'wire')[0] / med('tegola', 'wire')[0]:.3f} gzip (target <= 1.10)")
seeds = [n for n in rows if n.startswith("seed-tegola")]
if seeds and "seed-mapfarm" in rows:
    print(f"seeding, median (min-max) of {len(rows['seed-mapfarm'])} rounds; tiles/s over the area's tiles (the same for both) | over the tiles written with data:")
    def rates(name):
        area = [r["area"] / r["seconds"] for r in rows[name]]
        wrote = [r["tiles"] / r["seconds"] for r in rows[name]]
        return statistics.median(area), min(area), max(area), statistics.median(wrote)
    m = rates("seed-mapfarm")
    for name in seeds + ["seed-mapfarm"]:
        r, x = rates(name), rows[name][0]
        print(f"  {name:<20} {x['area']:.0f} area tiles, wrote {x['tiles']:.0f} with data ({x['empty']:.0f} empty {'files besides' if 'tegola' in name else 'left out'})"
              f" in {statistics.median(v['seconds'] for v in rows[name]):.1f} s: {r[0]:.2f} tiles/s ({r[1]:.2f}-{r[2]:.2f}) | {r[3]:.2f} tiles/s"
              f"{'  STOPPED at the time bound in ' + str(sum(v.get('stopped', 0) for v in rows[name])) + ' round(s)' if any(v.get('stopped') for v in rows[name]) else ''}"
              f"{'  FAILED tiles: ' + str(int(sum(v.get('failed', 0) for v in rows[name]))) + ' (not a whole seed)' if any(v.get('failed') for v in rows[name]) else ''}")
    for name in seeds:
        t = rates(name)
        print(f"  ratio mapfarm/{name[5:]}: {m[0] / t[0]:.2f}x over the area's tiles, {m[3] / t[3]:.2f}x over the tiles written (target >= 2)")
if "wrk-vector" in rows:
    v, r = med("wrk-vector", "rate"), med("wrk-raster", "rate")
    print(f"cached, wrk -t1 -c32, median (min-max) of {len(rows['wrk-vector'])} rounds:")
    r5 = med("wrk-raster512", "rate") if "wrk-raster512" in rows else None
    for name, m in (("vector", v), ("raster", r)) + ((("raster512", r5),) if r5 else ()):
        n = "wrk-" + name
        print(f"  {name} {m[0]:.0f} tiles/s ({m[1]:.0f}-{m[2]:.0f}), {med(n, 'wire')[0]:.0f} B a response, p99 {med(n, 'p99')[0]:.2f} ms,"
              f" server CPU {med(n, 'cpu')[0]:.1f} µs a request ({med(n, 'cpu')[1]:.1f}-{med(n, 'cpu')[2]:.1f};"
              f" user {med(n, 'usr')[0]:.1f}, system {med(n, 'sys')[0]:.1f}), wrk's CPU {med(n, 'wrkcpu')[0]:.1f} µs a request")
    ratios = sorted(a["rate"] / b["rate"] for a, b in zip(rows["wrk-vector"], rows["wrk-raster"]))
    print(f"  vector/raster {v[0] / r[0]:.2f} tiles/s (per round {ratios[0]:.2f}-{ratios[-1]:.2f}), CPU a request {med('wrk-vector', 'cpu')[0] / med('wrk-raster', 'cpu')[0]:.2f}")
    if r5:
        ratios = sorted(a["rate"] / b["rate"] for a, b in zip(rows["wrk-vector"], rows["wrk-raster512"]))
        print(f"  vector/raster512 (the same tile grid, ground and resolution) {v[0] / r5[0]:.2f} tiles/s (per round {ratios[0]:.2f}-{ratios[-1]:.2f}),"
              f" CPU a request {med('wrk-vector', 'cpu')[0] / med('wrk-raster512', 'cpu')[0]:.2f}")
if "cached-vector" in rows:
    v, r = med("cached-vector", "rate"), med("cached-raster", "rate")
    print(f"cached, 8 clients: vector {v[0]:.0f} tiles/s ({v[1]:.0f}-{v[2]:.0f}, {med('cached-vector', 'wire')[0]:.0f} B, server CPU {med('cached-vector', 'cpu')[0]:.3f} ms a tile),"
          f" raster {r[0]:.0f} tiles/s ({r[1]:.0f}-{r[2]:.0f}, {med('cached-raster', 'wire')[0]:.0f} B, server CPU {med('cached-raster', 'cpu')[0]:.3f} ms a tile); vector/raster {v[0] / r[0]:.2f}")
EOF
