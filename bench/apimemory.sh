#!/usr/bin/env bash
# bench/apimemory.sh [SECONDS]: an api process under hostile load, measured.
#
# Starts its own redis-server on a free loopback port and `mapfarm api` (disk store in a temp
# dir, default limits), then runs bench/apimemory for SECONDS (default 90): four streams of
# 4.3-8 MB hostile SOAP bodies beside four streams of small queries. Prints the answers, the
# normal requests' p50/p99 and the api's peak RSS (VmHWM). Stops what it started.
# Figures: docs/limits.md, "What an api process needs".
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
secs=${1:-90}
tmp=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	rm -rf "$tmp"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

go build -o "$tmp/mapfarm" .
go build -o "$tmp/apimemory" ./bench/apimemory
rport=$(free_port)
redis-server --bind 127.0.0.1 --port "$rport" --save "" --appendonly no --dir "$tmp" >"$tmp/redis.log" 2>&1 &
pids+=($!)
aport=$(free_port)
MAPFARM_REDIS_ADDR=127.0.0.1:$rport MAPFARM_STORE_DIR=$tmp/store MAPFARM_LISTEN=127.0.0.1:$aport \
	"$tmp/mapfarm" api >"$tmp/api.log" 2>&1 &
api=$!
pids+=("$api")
for _ in $(seq 60); do
	curl -sf "http://127.0.0.1:$aport/healthz" >/dev/null && break
	sleep 0.5
done
echo "api pid $api, RSS at rest: $(awk '/VmRSS/ {print $2, $3}' "/proc/$api/status")"
"$tmp/apimemory" -url "http://127.0.0.1:$aport/arcgis/services/world/MapServer" -pid "$api" -d "${secs}s"
