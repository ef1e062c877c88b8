#!/usr/bin/env bash
# bench/vtsqlcpu.sh [RUNS]: what one z14 vector tile of the dense parcels (bench/dense.sh's
# dense_parcels, database mapfarm_bench) costs the database, in CPU time of the backend process
# rather than in wall time, so that a busy machine moves the figures little: each query is sent
# RUNS times (default 200) on one connection after one warm-up, and the backend's user + system
# time (/proc/<pid>/stat, in clock ticks) is divided by RUNS. The tile is 14/3735/6760, with the
# encoder's buffer (64 of 4096):
#
#   asmvt          PostGIS's ST_AsMVT(ST_AsMVTGeom(...)): the whole tile made in the database
#   read-exact     the PostGIS provider's read as it was: && on the index, the exact box test
#                  with four box3d functions a row, WKB, ORDER BY the id
#   read           the provider's read of a tile now: && alone (the exact test is done in Go on
#                  each row's bound), WKB, ORDER BY the id
#   read-twkb      the same with TWKB at the tile unit's resolution (what a draw's
#                  Query.Resolution asks for): a third of the bytes, more of the backend's CPU
#   read-unordered the same as read without ORDER BY
#
# Needs psql and PostgreSQL on 127.0.0.1:5432 (user postgres, trust) on this machine (it reads the
# backend's /proc entry).
set -euo pipefail
runs=${1:-200}
w=20037508.342789244
read -r a b c d < <(awk -v w=$w 'BEGIN { t = 2 * w / 2^14; p = t * 64 / 4096; x = 3735; y = 6760
	printf "%.6f %.6f %.6f %.6f\n", x * t - w - p, w - (y + 1) * t - p, (x + 1) * t - w + p, w - y * t + p }')
box="geom && ST_MakeEnvelope($a, $b, $c, $d, 3857)"
exact="ST_XMin(geom::box3d) <= $c AND ST_XMax(geom::box3d) >= $a AND ST_YMin(geom::box3d) <= $d AND ST_YMax(geom::box3d) >= $b"
wkb="CASE WHEN ST_IsEmpty(geom) THEN NULL ELSE ST_AsBinary(ST_Force2D(geom)) END"
cols="gid, parcel_id, land_use, assessed_value"
names=(asmvt read-exact read read-twkb read-unordered)
queries=(
	"WITH b AS (SELECT ST_TileEnvelope(14, 3735, 6760) AS e, ST_TileEnvelope(14, 3735, 6760, margin => 64.0 / 4096) AS m)
	 SELECT length(ST_AsMVT(q, 'Parcels', 4096, 'geom', 'gid')) FROM (SELECT p.gid, p.parcel_id, p.land_use, p.assessed_value,
	 ST_AsMVTGeom(p.geom, b.e, 4096, 64, true) AS geom FROM dense_parcels p, b WHERE p.geom && b.m) q"
	"SELECT count(*), sum(length(g)) FROM (SELECT $wkb g, $cols FROM dense_parcels WHERE $box AND $exact ORDER BY gid) s"
	"SELECT count(*), sum(length(g)) FROM (SELECT $wkb g, $cols FROM dense_parcels WHERE $box ORDER BY gid) s"
	"SELECT count(*), sum(length(g)) FROM (SELECT ST_AsTWKB(geom, 4) g, $cols FROM dense_parcels WHERE $box ORDER BY gid) s"
	"SELECT count(*), sum(length(g)) FROM (SELECT $wkb g, $cols FROM dense_parcels WHERE $box) s"
)
coproc PSQL { psql -qAt -h 127.0.0.1 -U postgres -v ON_ERROR_STOP=1 mapfarm_bench 2>&1; }
in=${PSQL[1]} out=${PSQL[0]}
echo "SET max_parallel_workers_per_gather = 0; SET jit = off; SELECT pg_backend_pid();" >&"$in"
read -r pid <&"$out"
ticks() { awk '{ print $14 + $15 }' "/proc/$pid/stat"; }
hz=$(getconf CLK_TCK)
echo "backend CPU a query, $runs runs each (load $(cut -d' ' -f1-3 /proc/loadavg)):"
for i in "${!names[@]}"; do
	q=${queries[$i]//$'\n'/ }
	echo "$q;" >&"$in"
	read -r warm <&"$out"
	t0=$(ticks)
	for _ in $(seq "$runs"); do echo "$q;" >&"$in"; done
	echo "SELECT 'done';" >&"$in"
	while read -r line <&"$out"; do [[ $line == done ]] && break; done
	awk -v n="${names[$i]}" -v d=$(($(ticks) - t0)) -v r="$runs" -v hz="$hz" -v w="$warm" \
		'BEGIN { printf "  %-15s %6.2f ms   (%s)\n", n, d * 1000 / hz / r, w }'
done
echo '\q' >&"$in"
