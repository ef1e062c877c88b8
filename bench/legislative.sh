#!/usr/bin/env bash
# Load-test the legislative-data API (internal/legislative) on loopback with
# wrk and print requests/s and p99 for the session list and a session detail.
#
#   bash bench/legislative.sh            # wrk -t2 -c32 -d10s --latency
#   DURATION=30s CONNECTIONS=64 bash bench/legislative.sh
#
# The server is the package's TestLegServe helper (a test binary built here),
# serving the embedded default dataset. Targets: >= 52,000 req/s, p99 <= 5 ms.
set -euo pipefail

cd "$(dirname "$0")/.."
ADDR=${ADDR:-127.0.0.1:18089}
THREADS=${THREADS:-2}
CONNECTIONS=${CONNECTIONS:-32}
DURATION=${DURATION:-10s}

if ! command -v wrk >/dev/null 2>&1; then
	echo "wrk not found; installing Debian's wrk" >&2
	apt-get update -qq && apt-get install -y -qq wrk >/dev/null
fi

work=$(mktemp -d)
server_pid=
cleanup() {
	if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
	rm -rf "$work"
}
trap cleanup EXIT

go test -c -o "$work/legislative.test" ./internal/legislative
# The server gets one core (GOMAXPROCS=1) and wrk the other: on a 2-core machine the two would
# otherwise preempt each other and the tail latency measures the scheduler, not the server.
GOMAXPROCS=${SERVER_PROCS:-1} LEGSERVE_ADDR=$ADDR LEGSERVE_FOR=10m "$work/legislative.test" -test.run '^TestLegServe$' -test.v -test.timeout 0 >"$work/server.log" 2>&1 &
server_pid=$!

for _ in $(seq 1 100); do
	if curl -fsS -o /dev/null "http://$ADDR/api/v2/" 2>/dev/null; then break; fi
	sleep 0.1
done
curl -fsS -o /dev/null "http://$ADDR/api/v2/" || { cat "$work/server.log" >&2; exit 1; }

run() {
	local name=$1 path=$2 out
	echo "== $name: wrk -t$THREADS -c$CONNECTIONS -d$DURATION --latency http://$ADDR$path"
	out=$(wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency "http://$ADDR$path")
	echo "$out"
	local rps p99
	rps=$(awk '/^Requests\/sec:/ {print $2}' <<<"$out")
	p99=$(awk '$1 == "99%" {print $2}' <<<"$out")
	if grep -q 'Non-2xx' <<<"$out"; then echo "!! non-2xx responses" >&2; exit 1; fi
	printf 'RESULT %-16s requests/s=%s p99=%s\n' "$name" "$rps" "$p99"
}

run session-list /api/v2/
run session-detail /api/v2/general_assembly_136/
