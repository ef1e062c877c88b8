#!/usr/bin/env bash
# bench/tiles.sh [SECONDS [ROUNDS]]: cached tiles, mapfarm beside nginx, in one run.
#
# Starts `mapfarm serve` (embedded Redis, disk store in a temp dir, every default middleware on:
# tokens off, rate limit off, default CORS, the request log at info), seeds levels 0-5 of the
# sample world map's compact-V2 cache through the admin API, and exports the stored z5 tiles
# (671 of 1,024: the others are empty) as files for an nginx of its own. Then wrk
# (`-t1 -c32 -dSECONDS --latency`, default 8 s, paths cycled by a Lua script) runs against, in turn:
#
#   nginx       the z5 files as static files
#   rest        mapfarm's REST tile route    /arcgis/rest/services/world/MapServer/tile/5/<row>/<col>
#   directory   mapfarm's exploded-path route /arcgis/rest/directories/arcgiscache/world/Layers/_alllayers/L05/R…/C….png
#
# after a warm-up pass over every path, in ROUNDS rounds (default 3) whose order turns, so that the
# noise of a shared machine hits all three alike; prints each round, and the medians of tiles/s and
# p99 with the ratios to nginx, and each server's own CPU time per request (its processes' user and
# system time around each wrk run, from /proc: nginx's master and workers, mapfarm's one process),
# which a busy machine disturbs far less than the rates, and their write system calls per request
# (write and writev, /proc/<pid>/io's syscw; nginx sends the files' bytes with sendfile, not
# counted there), which it does not disturb at all.
#
# A fourth server, "floor", is bench/httpfloor: the z5 files in memory behind a bare net/http
# handler (no router, middleware, cache operation or log), what Go's net/http itself costs a tile;
# FLOOR_TIMEOUTS=1 gives it the read and idle time-outs the api's server sets.
# BASE_BIN=path runs another server, "base": that mapfarm binary (built from another commit, say
# main: `git worktree add /tmp/main main && (cd /tmp/main && go build -o /tmp/mapfarm.main .)`)
# on the same store, its REST tile route measured in the same rounds, so that a change is
# compared with what it changes in one run.
# Loopback only; nginx and wrk come from apt when missing. Stops what it started.
# Figures and how to read them: bench/README.md ("Cached tiles beside nginx"), docs/wmts.md.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
secs=${1:-8}
rounds=${2:-3}
for bin in nginx wrk; do
	if ! command -v "$bin" >/dev/null; then
		apt-get install -y "$([ "$bin" = nginx ] && echo nginx-light || echo wrk)" >/dev/null
	fi
done
tmp=$(mktemp -d)
chmod 755 "$tmp" # nginx's workers read the files as another user
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	[ -f "$tmp/nginx.pid" ] && kill "$(cat "$tmp/nginx.pid")" 2>/dev/null || true
	sleep 0.5
	rm -rf "$tmp"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

go build -o "$tmp/mapfarm" .
port=$(free_port)
admin=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
MAPFARM_STORE_DIR=$tmp/store MAPFARM_STATE_DIR=$tmp/state MAPFARM_LISTEN=127.0.0.1:$port MAPFARM_ADMIN_TOKEN=$admin \
	MAPFARM_RATE_LIMIT=0 "$tmp/mapfarm" serve >"$tmp/mapfarm.log" 2>&1 &
pids+=($!)
base=http://127.0.0.1:$port
for _ in $(seq 120); do
	curl -sf "$base/healthz" >/dev/null && break
	sleep 0.5
done

# Seed levels 0-5 and wait for the job.
job=$(curl -sf -H "Authorization: Bearer $admin" -H 'Content-Type: application/json' \
	-d '{"service":"world","map":"Layers","levels":[0,1,2,3,4,5],"mode":"recreateAll"}' "$base/admin/seed" |
	python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
for _ in $(seq 600); do
	state=$(curl -sf -H "Authorization: Bearer $admin" "$base/admin/seed/$job" | python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])')
	case $state in done) break ;; failed | cancelled) echo "seeding $state" >&2; exit 1 ;; esac
	sleep 1
done
[ "$state" = done ] || { echo "seeding did not finish: $state" >&2; exit 1; }

# Export the stored z5 tiles as files, through the directory route, and list the three routes' paths.
mkdir -p "$tmp/www"
: >"$tmp/nginx.paths"
: >"$tmp/rest.paths"
: >"$tmp/directory.paths"
for row in $(seq 0 31); do
	for col in $(seq 0 31); do
		dir=$(printf '/arcgis/rest/directories/arcgiscache/world/Layers/_alllayers/L05/R%08x/C%08x.png' "$row" "$col")
		mkdir -p "$tmp/www/5/$row"
		if curl -sf -o "$tmp/www/5/$row/$col.png" "$base$dir"; then
			echo "/5/$row/$col.png" >>"$tmp/nginx.paths"
			echo "/arcgis/rest/services/world/MapServer/tile/5/$row/$col" >>"$tmp/rest.paths"
			echo "$dir" >>"$tmp/directory.paths"
		else
			rm -f "$tmp/www/5/$row/$col.png"
		fi
	done
done
tiles=$(wc -l <"$tmp/nginx.paths")
names=(nginx rest directory)
if [ -n "${BASE_BIN:-}" ]; then
	bport=$(free_port)
	MAPFARM_STORE_DIR=$tmp/store MAPFARM_STATE_DIR=$tmp/state.base MAPFARM_LISTEN=127.0.0.1:$bport MAPFARM_ADMIN_TOKEN=$admin \
		MAPFARM_RATE_LIMIT=0 "$BASE_BIN" serve >"$tmp/base.log" 2>&1 &
	pids+=($!)
	for _ in $(seq 120); do
		curl -sf "http://127.0.0.1:$bport/healthz" >/dev/null && break
		sleep 0.5
	done
	cp "$tmp/rest.paths" "$tmp/base.paths"
	names+=(base)
fi

# The floor of Go's net/http: the same files, in memory, behind a bare handler (bench/httpfloor).
go build -o "$tmp/httpfloor" ./bench/httpfloor
fport=$(free_port)
"$tmp/httpfloor" -root "$tmp/www" -listen 127.0.0.1:$fport ${FLOOR_TIMEOUTS:+-timeouts} >"$tmp/httpfloor.log" 2>&1 &
floor_pid=$!
pids+=($floor_pid)
cp "$tmp/nginx.paths" "$tmp/floor.paths"
names+=(floor)

nport=$(free_port)
cat >"$tmp/nginx.conf" <<EOF
worker_processes auto;
pid $tmp/nginx.pid;
error_log $tmp/nginx.error.log;
events { worker_connections 1024; }
http {
	access_log off;
	sendfile on;
	tcp_nopush on;
	types { image/png png; }
	server {
		listen 127.0.0.1:$nport;
		root $tmp/www;
		add_header Cache-Control "public, max-age=3600";
	}
}
EOF
nginx -c "$tmp/nginx.conf" -p "$tmp"
for _ in $(seq 20); do
	curl -sf -o /dev/null "http://127.0.0.1:$nport$(head -1 "$tmp/nginx.paths")" && break
	sleep 0.2
done

cat >"$tmp/paths.lua" <<'EOF'
local paths = {}
for line in io.lines(os.getenv("TILE_PATHS")) do paths[#paths + 1] = line end
local i = 0
request = function()
	i = i % #paths + 1
	return wrk.format("GET", paths[i])
end
EOF

# warm URL NAME: ask for every path once.
warm() {
	while read -r p; do curl -sf -o /dev/null "$1$p"; done <"$tmp/$2.paths"
}

# cpu NAME: the CPU clock ticks the server NAME's processes have used (nginx: master and workers),
# and their write system calls so far (write and writev: /proc/<pid>/io's syscw).
cpu() {
	local procs=${pids[0]}
	[ "$1" = base ] && procs=${pids[1]}
	[ "$1" = floor ] && procs=$floor_pid
	[ "$1" = nginx ] && procs="$(cat "$tmp/nginx.pid") $(pgrep -P "$(cat "$tmp/nginx.pid")" | tr '\n' ' ')"
	for p in $procs; do echo "$(awk '{ print $14 + $15 }' "/proc/$p/stat") $(awk '/^syscw/ { print $2 }' "/proc/$p/io")"; done |
		awk '{ t += $1; w += $2 } END { print t, w }'
}

# run NAME URL: wrk over the paths; prints "tiles/s p99_ms us_cpu_per_request writes_per_request".
run() {
	local name=$1 url=$2 cpu0 cpu1 w0 w1
	read -r cpu0 w0 < <(cpu "$name")
	TILE_PATHS=$tmp/$name.paths wrk -t1 -c32 -d"${secs}s" --latency -s "$tmp/paths.lua" "$url" >"$tmp/$name.wrk"
	read -r cpu1 w1 < <(cpu "$name")
	echo "$((cpu1 - cpu0))" >"$tmp/$name.cpu"
	if grep -q 'Non-2xx' "$tmp/$name.wrk"; then
		echo "$name: $(grep 'Non-2xx' "$tmp/$name.wrk")" >&2
	fi
	python3 - "$tmp/$name.wrk" "$(cat "$tmp/$name.cpu")" "$(getconf CLK_TCK)" "$((w1 - w0))" <<'EOF'
import re, sys
t = open(sys.argv[1]).read()
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", t).group(1))
reqs = int(re.search(r"(\d+) requests in", t).group(1))
v, unit = re.search(r"^\s+99%\s+([\d.]+)(us|ms|s)\s*$", t, re.M).groups()
ms = float(v) * {"us": 0.001, "ms": 1, "s": 1000}[unit]
us = int(sys.argv[2]) / int(sys.argv[3]) * 1e6 / max(reqs, 1)
print(f"{rps:.0f} {ms:.2f} {us:.1f} {int(sys.argv[4]) / max(reqs, 1):.2f}")
EOF
}

nurl=http://127.0.0.1:$nport
warm "$nurl" nginx
warm "$base" rest
warm "$base" directory
[ -n "${BASE_BIN:-}" ] && warm "http://127.0.0.1:$bport" base
warm "http://127.0.0.1:$fport" floor
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg); $tiles z5 tiles; wrk -t1 -c32 -d${secs}s, paths cycled; $rounds rounds, the order turning"
: >"$tmp/results"
order=("${names[@]}")
for round in $(seq "$rounds"); do
	line="round $round:"
	for name in "${order[@]}"; do
		url=$base
		[ "$name" = nginx ] && url=$nurl
		[ "$name" = base ] && url=http://127.0.0.1:$bport
		[ "$name" = floor ] && url=http://127.0.0.1:$fport
		read -r rps p99 us writes < <(run "$name" "$url")
		echo "$round $name $rps $p99 $us $writes" >>"$tmp/results"
		line="$line  $name $rps/s p99 $p99 ms ${us} µs CPU $writes writes"
	done
	echo "$line"
	order=("${order[@]:1}" "${order[0]}")
done
echo "load after:  $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$tmp/results" <<'EOF'
import statistics, sys
by = {}
for line in open(sys.argv[1]):
    _, name, rps, p99, us, writes = line.split()
    by.setdefault(name, []).append((float(rps), float(p99), float(us), float(writes)))
med = {n: [statistics.median(x[i] for x in v) for i in range(4)] for n, v in by.items()}
print(f"medians over {len(by['nginx'])} rounds (ratio = tiles/s over nginx's; CPU = the server's own per request,")
print("cpu ratio = nginx's over this: what the tiles/s ratio would be if the servers were CPU-bound alone;")
print("writes = the server's write and writev system calls per request, nginx's sendfile not among them):")
print(f"{'route':<10} {'tiles/s':>9} {'range':>15} {'p99 ms':>8} {'ratio':>6} {'CPU µs':>7} {'cpu ratio':>9} {'writes':>6}")
for n in [n for n in ("nginx", "floor", "rest", "directory", "base") if n in by]:
    rs = [x[0] for x in by[n]]
    print(f"{n:<10} {med[n][0]:>9.0f} {min(rs):>7.0f}-{max(rs):<7.0f} {med[n][1]:>8.2f} {med[n][0] / med['nginx'][0]:>6.2f} {med[n][2]:>7.1f} {med['nginx'][2] / med[n][2]:>9.2f} {med[n][3]:>6.2f}")
EOF
echo "mapfarm's request log: $(grep -c '"msg":"request"' "$tmp/mapfarm.log") request lines (the export's 404s among them), $(grep -c '"msg":"tile hits"' "$tmp/mapfarm.log") tile-hits lines"
