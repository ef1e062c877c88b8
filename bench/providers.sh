#!/usr/bin/env bash
# Providers benchmark at scale (issue 12): one million synthetic parcels (bench/parcelgen) in a
# GeoPackage and in PostGIS, served by a farm of separate processes (one api, one worker, real
# Redis, local-disk store), side by side with UMN MapServer drawing the same PostGIS table with
# the same style.
#
#   bench/providers.sh [N]        N parcels (default 1000000); RUNS=7 timed requests per measure
#
# Prints, per provider: api and worker start time (to /readyz 200) and RSS (after start, after
# the run); the 1% envelope count and its first page of 1,000 features; ExportMapImage 1024×768 at
# 1:2,000 and 1:500,000 (medians, see bench/providerbench); seeding levels 12–14 over the region
# (cachetool's local farm in one process, as many render slots as CPUs); and map2img's mean
# ms/image for the same two views (one process drawing RUNS images).
# Needs: Go, PostgreSQL with PostGIS on 127.0.0.1:5432 (user postgres, trust) or
# MAPFARM_BENCH_PG_ADMIN, Redis on 127.0.0.1:6379 or MAPFARM_BENCH_REDIS, mapserver-bin (installed
# with apt-get when missing). The data is generated once and cached under $MAPFARM_CACHE/bench.
set -euo pipefail
N=${1:-1000000}
RUNS=${RUNS:-7}
root=$(cd "$(dirname "$0")/.." && pwd)
cache=${MAPFARM_CACHE:-$HOME/.cache/mapfarm}/bench
pg_admin=${MAPFARM_BENCH_PG_ADMIN:-"host=127.0.0.1 port=5432 user=postgres dbname=postgres sslmode=disable"}
pg="${pg_admin/dbname=postgres/dbname=mapfarm_bench}"
redis=${MAPFARM_BENCH_REDIS:-127.0.0.1:6379}
gpkg=$cache/parcels-$N.gpkg
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT

if ! command -v map2img >/dev/null; then
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends mapserver-bin fonts-dejavu-core >/dev/null
fi
echo "== build"
(cd "$root" && go build -o "$tmp/mapfarm" . && go build -o "$tmp/parcelgen" ./bench/parcelgen &&
	go build -o "$tmp/cachetool" ./cachetool && go build -o "$tmp/providerbench" ./bench/providerbench)

echo "== data: $N parcels"
mkdir -p "$cache"
psql "$pg_admin" -qAtc "SELECT 1 FROM pg_database WHERE datname = 'mapfarm_bench'" | grep -q 1 ||
	psql "$pg_admin" -qc "CREATE DATABASE mapfarm_bench"
have=$(psql "$pg" -qAtc "SELECT count(*) FROM parcels" 2>/dev/null || echo 0)
if [[ ! -f $gpkg || $have != "$N" ]]; then
	rm -f "$gpkg"
	"$tmp/parcelgen" -n "$N" -gpkg "$gpkg" -pg "$pg"
else
	echo "cached: $gpkg and table parcels ($have rows)"
fi

# One service per provider, the same layer and style in both.
layer() { # layer SOURCE
	cat <<YAML
        cache: {scheme: webMercator, maxLevel: 14, format: PNG, storage: compactV2}
        layers:
          - id: 0
            name: Parcels
            geometryType: polygon
            source: $1
            displayField: parcel_id
            renderer:
              type: simple
              symbol: {type: simpleFill, style: solid, color: [240, 232, 210], outline: {color: [110, 100, 90], width: 0.75}}
            labels:
              - field: parcel_id
                font: {family: DejaVuSans, size: 7}
                color: [40, 40, 40]
                maxScale: 0
                minScale: 5000
YAML
}
cat >"$tmp/services.yaml" <<YAML
connections:
  bench: {dsnEnv: MAPFARM_BENCH_DSN, statementTimeout: 60s}
services:
  - name: parcels_gpkg
    maps:
      - name: Layers
        spatialReference: 3857
$(layer "{geopackage: $gpkg, table: parcels}")
  - name: parcels_pg
    maps:
      - name: Layers
        spatialReference: 3857
$(layer "{postgis: bench, table: parcels, idColumn: gid}")
YAML
export MAPFARM_BENCH_DSN=$pg MAPFARM_SERVICES=$tmp/services.yaml MAPFARM_REDIS_ADDR=$redis MAPFARM_STORE=disk \
	MAPFARM_STORE_DIR=$tmp/store MAPFARM_LOG_LEVEL=warn
rss() { awk '/VmRSS/ { printf "%.0f MB", $2 / 1024 }' "/proc/$1/status"; }
# start ROLE PORT: starts a process and sets ready to its time to /readyz 200.
start() {
	local role=$1 port=$2 t0
	t0=$(date +%s%N)
	if [[ $role == api ]]; then
		MAPFARM_LISTEN=127.0.0.1:$port "$tmp/mapfarm" api >"$tmp/$role.log" 2>&1 &
	else
		MAPFARM_METRICS_LISTEN=127.0.0.1:$port "$tmp/mapfarm" worker >"$tmp/$role.log" 2>&1 &
	fi
	pids+=($!)
	echo $! >"$tmp/$role.pid"
	for _ in $(seq 1 300); do
		if curl -fs "http://127.0.0.1:$port/readyz" >/dev/null; then
			ready=$(awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN { printf "%.2f s", (b - a) / 1e9 }')
			return
		fi
		sleep 0.05
	done
	echo "$role did not get ready; log:" >&2
	cat "$tmp/$role.log" >&2
	exit 1
}
echo "== farm: api + worker (separate processes, real Redis $redis)"
start api 18080
api_t=$ready
start worker 18081
worker_t=$ready
api_pid=$(cat "$tmp/api.pid") worker_pid=$(cat "$tmp/worker.pid")
echo "api start $api_t, RSS $(rss "$api_pid"); worker start $worker_t, RSS $(rss "$worker_pid")"

echo "== requests (median of $RUNS)"
"$tmp/providerbench" -url http://127.0.0.1:18080 -runs "$RUNS"
echo "after the requests: api RSS $(rss "$api_pid"), worker RSS $(rss "$worker_pid")"

echo "== seeding levels 12-14 over the region (cachetool's local farm)"
for svc in parcels_gpkg parcels_pg; do
	t0=$(date +%s%N)
	env -u MAPFARM_REDIS_ADDR "$tmp/cachetool" seed -service "$svc" -levels 12-14 -extent -10915000,3480000,-10815000,3580000 >"$tmp/seed-$svc.log" 2>&1
	tiles=$(find "$tmp/store" -path "*$svc*" -name '*.bundle' | wc -l)
	awk -v s="$svc" -v a="$t0" -v b="$(date +%s%N)" 'BEGIN { printf "%-14s seed 12-14: %.1f s\n", s, (b - a) / 1e9 }'
	tail -2 "$tmp/seed-$svc.log"
done

echo "== UMN MapServer $(map2img -v 2>/dev/null | head -1 | cut -c1-40), same PostGIS table and style"
cat >"$tmp/parcels.map" <<MAPFILE
MAP
  NAME "parcels"
  SIZE 1024 768
  UNITS METERS
  IMAGECOLOR 255 255 255
  FONTSET "$tmp/fonts.txt"
  PROJECTION "init=epsg:3857" END
  OUTPUTFORMAT NAME "png24" DRIVER "AGG/PNG" MIMETYPE "image/png" IMAGEMODE RGB EXTENSION "png" END
  LAYER
    NAME "parcels"
    TYPE POLYGON
    STATUS ON
    CONNECTIONTYPE POSTGIS
    CONNECTION "$pg"
    DATA "geom FROM parcels USING UNIQUE gid USING SRID=3857"
    PROJECTION "init=epsg:3857" END
    LABELITEM "parcel_id"
    CLASS
      STYLE COLOR 240 232 210 OUTLINECOLOR 110 100 90 WIDTH 1 END
      LABEL FONT "DejaVuSans" SIZE 7 COLOR 40 40 40 POSITION CC PARTIALS FALSE MAXSCALEDENOM 5000 END
    END
  END
END
MAPFILE
echo "DejaVuSans /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf" >"$tmp/fonts.txt"
cx=-10865000 cy=3530000
for sc in 2000 500000; do
	half=$(awk -v s=$sc 'BEGIN { printf "%.3f", s * 0.0254 / 96 * 1024 / 2 }')
	halfh=$(awk -v h="$half" 'BEGIN { printf "%.3f", h * 768 / 1024 }')
	ext=$(awk -v x=$cx -v y=$cy -v h="$half" -v v="$halfh" 'BEGIN { printf "%.3f %.3f %.3f %.3f", x - h, y - v, x + h, y + v }')
	# One process drawing RUNS images (-c), as the reference bench/mapserver/run.sh does: the process's
	# start and connection are spread over the draws.
	t0=$(date +%s%N)
	# shellcheck disable=SC2086 # the extent is four words
	map2img -m "$tmp/parcels.map" -o "$tmp/ms.png" -e $ext -c "$RUNS" >/dev/null 2>&1
	awk -v s=$sc -v n="$RUNS" -v a="$t0" -v b="$(date +%s%N)" 'BEGIN { printf "mapserver      map2img 1:%-9s                 mean %9.1f ms  (map2img -c %d, one process)\n", s, (b - a) / 1e6 / n, n }'
done
