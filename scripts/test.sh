#!/usr/bin/env bash
# scripts/test.sh: install and start what the tests need, then run them.
#
#   ./scripts/test.sh                      # everything: gofmt, vet, tests (-race but e2e), fuzz smoke
#   ./scripts/test.sh ./internal/blob/...  # only these packages (no fuzz smoke)
#
# On a fresh Debian 12 machine with only Go, it:
#   - uses the Redis on 127.0.0.1:6379 if it answers PING, else starts its own
#     on a free loopback port in a temp dir (installing redis-server with apt
#     if needed);
#   - builds the pinned MinIO server once into $MAPFARM_CACHE/bin (see
#     scripts/minio.sh) and starts it on a free loopback port with a temp data
#     dir and fresh credentials;
#   - uses the PostgreSQL on 127.0.0.1:5432 if it answers and has postgis,
#     else starts a throw-away cluster (initdb, as the postgres user when
#     root) on a free loopback port in the temp dir, installing
#     postgresql-15-postgis-3 with apt if needed; tests create and drop
#     their own databases in it;
#   - installs python3-zeep with apt if /usr/bin/python3 cannot import zeep;
#   - installs libproj-dev (PROJ, for the build tag proj) with apt if proj.h is missing;
#   - installs chromium (and npm) with apt, and playwright-core with npm into
#     $MAPFARM_CACHE/node, if missing (the map viewer test);
#   - exports MAPFARM_TEST_* and MAPFARM_REQUIRE_SERVICES=1 and runs gofmt,
#     go vet, go test and the fuzz smoke targets.
# Servers it started are stopped when it exits. See docs/testing.md.
#
# Environment (all optional):
#   MAPFARM_CACHE            cache dir (default $HOME/.cache/mapfarm)
#   MAPFARM_REDIS_PROBE      Redis to reuse if it answers (default 127.0.0.1:6379)
#   MAPFARM_TEST_REDIS       use this Redis instead of probing or starting one
#   MAPFARM_POSTGRES_PROBE   PostgreSQL to reuse if it answers and has postgis
#                            (default host=127.0.0.1 port=5432 user=postgres)
#   MAPFARM_TEST_POSTGRES    use this PostgreSQL (admin DSN) instead of probing
#                            or starting a throw-away cluster (initdb)
#   MAPFARM_TEST_MINIO_ENDPOINT/_ACCESS_KEY/_SECRET_KEY
#                            use this MinIO instead of starting one
#   MAPFARM_GO_TEST_TIMEOUT  go test -timeout (default 20m)
#   MAPFARM_GO_TEST_FLAGS    extra go test flags, e.g. "-v -run TestX"
#   MAPFARM_FUZZ_TIME        -fuzztime for every target, e.g. 30s or 1000000x (default: each
#                            target's own count of runs, about 5 s each; 0 skips them)
#   MAPFARM_FUZZ_TARGETS     extra fuzz targets, space-separated "pkg:FuzzName:runs"
#   MAPFARM_FUZZ_ALL         1: also the bundle index readers' fuzz targets
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
: "${HOME:=$(cd ~ && pwd)}"

# Fuzz smoke targets, "package:FuzzFunc:runs", each fuzzed for that many runs in full runs
# (about 5 s each on this project's 2-core machines; the rates differ 70-fold). Add new fuzz
# targets here. A count of runs, not a time: with -fuzztime as a duration, Go 1.26's fuzzing
# coordinator can end a run that found nothing with "context deadline exceeded" when the time is
# up while a worker is mid-input (go.dev/issue/75804, fixed in Go 1.27), and the smoke failed
# at random. A count has no deadline to race; -timeout still ends a hang.
# The readers of untrusted input (and the disk store's key mapping, the last guard against path
# traversal) run in every full run; the bundle index readers (their seed corpora run in go test
# anyway) with MAPFARM_FUZZ_ALL=1, to keep a full run under 10 minutes on 2 cores.
FUZZ_TARGETS=(
	./internal/blob:FuzzDiskKey:5000
	./internal/soap:FuzzReadRequest:150000
	./internal/where:FuzzParse:30000
	./internal/proj:FuzzFromWKT:50000
	./internal/feature/gpkg/geomblob:FuzzDecodeGeometry:300000
	./internal/feature/geojson:FuzzParse:110000
)
if [[ ${MAPFARM_FUZZ_ALL:-0} == 1 ]]; then
	FUZZ_TARGETS+=(
		./internal/tilecache:FuzzBundleIndexV2:100000
		./internal/tilecache:FuzzBundleIndexV1:100000
	)
fi
# shellcheck disable=SC2206 # word splitting intended
FUZZ_TARGETS+=(${MAPFARM_FUZZ_TARGETS:-})

GO_TEST_TIMEOUT=${MAPFARM_GO_TEST_TIMEOUT:-20m}
FUZZ_TIME=${MAPFARM_FUZZ_TIME:-}
REDIS_PROBE=${MAPFARM_REDIS_PROBE:-127.0.0.1:6379}
CACHE_DIR=${MAPFARM_CACHE:-$HOME/.cache/mapfarm}

PKGS=("$@")
FULL_RUN=0
if ((${#PKGS[@]} == 0)); then
	PKGS=(./...)
	FULL_RUN=1
fi

SCRIPT_START=$SECONDS
section() { printf '\n==== %s (at %ds) ====\n' "$*" "$((SECONDS - SCRIPT_START))"; }
note() { printf '  %s\n' "$*"; }
die() { printf 'test.sh: %s\n' "$*" >&2; exit 1; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/mapfarm-test.XXXXXX")
PIDS=()
cleanup() {
	local pid
	for pid in "${PIDS[@]}"; do
		kill "$pid" 2>/dev/null || true
	done
	for pid in "${PIDS[@]}"; do
		wait "$pid" 2>/dev/null || true
	done
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---------------------------------------------------------------- helpers

APT_UPDATED=0
apt_install() {
	local sudo=()
	if ((EUID != 0)); then
		command -v sudo >/dev/null || die "need root or sudo to apt-get install $*"
		sudo=(sudo -n)
	fi
	command -v apt-get >/dev/null || die "apt-get not found; install $* by hand"
	if ((APT_UPDATED == 0)); then
		note "apt-get update"
		"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
		APT_UPDATED=1
	fi
	note "apt-get install $*"
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# redis_ping HOST:PORT succeeds if a Redis answers PING there (bash only,
# no redis-cli needed).
redis_ping() {
	local host=${1%:*} port=${1##*:}
	timeout 3 bash -c '
		exec 3<>"/dev/tcp/$0/$1" || exit 1
		printf "PING\r\n" >&3
		IFS= read -r -t 2 line <&3 || exit 1
		[[ $line == +PONG* ]]
	' "$host" "$port" 2>/dev/null
}

# http_ok URL-PATH HOST:PORT succeeds if GET answers 200 (bash only).
http_ok() {
	local path=$1 host=${2%:*} port=${2##*:}
	timeout 3 bash -c '
		exec 3<>"/dev/tcp/$0/$1" || exit 1
		printf "GET %s HTTP/1.0\r\nHost: %s:%s\r\n\r\n" "$2" "$0" "$1" >&3
		IFS= read -r -t 2 line <&3 || exit 1
		[[ $line == "HTTP/1."?" 200"* ]]
	' "$host" "$port" "$path" 2>/dev/null
}

# port_in_use PORT succeeds if something accepts connections on loopback.
port_in_use() { timeout 1 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$0"' "$1" 2>/dev/null; }

# free_port prints a loopback port nothing listens on, chosen at random
# below Linux's ephemeral range (32768+) so outgoing connections don't
# take it meanwhile.
free_port() {
	local i port
	for ((i = 0; i < 100; i++)); do
		port=$((20000 + RANDOM % 12000))
		if ! port_in_use "$port"; then
			echo "$port"
			return 0
		fi
	done
	die "no free loopback port found in 100 tries"
}

random_hex() { head -c "$1" /dev/urandom | od -An -tx1 | tr -d ' \n'; }

# wait_for SECONDS DESCRIPTION PID COMMAND...: poll COMMAND every 0.2s until
# it succeeds, the process PID dies, or time runs out.
wait_for() {
	local secs=$1 what=$2 pid=$3 i
	shift 3
	for ((i = 0; i < secs * 5; i++)); do
		if "$@"; then return 0; fi
		kill -0 "$pid" 2>/dev/null || { note "$what exited while starting"; return 1; }
		sleep 0.2
	done
	note "$what did not answer within ${secs}s"
	return 1
}

# ---------------------------------------------------------------- Go

section "Go"
command -v go >/dev/null || die "go is not on PATH"
go version

# ---------------------------------------------------------------- installs

# What a fresh machine lacks is fetched at once, overlapped: the MinIO build and a warm-up
# build of this module (CPU) run in the background while apt (network and disk) installs
# every missing Debian package in one call. The sections below then find everything in place
# (their own apt steps remain for the odd case, e.g. a package removed meanwhile).
section "installs"
MINIO_BUILD_LOG=$WORK/minio-build.log
./scripts/minio.sh path >"$MINIO_BUILD_LOG" 2>&1 &
MINIO_BUILD_PID=$!
want_apt=()
if [[ -z ${MAPFARM_TEST_REDIS:-} ]] && ! command -v redis-server >/dev/null && ! redis_ping "$REDIS_PROBE"; then
	want_apt+=(redis-server)
fi
if ! command -v psql >/dev/null || ! compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null ||
	! compgen -G "/usr/share/postgresql/*/extension/postgis.control" >/dev/null; then
	want_apt+=(postgresql-15-postgis-3 postgresql-client-15)
fi
/usr/bin/python3 -c 'import zeep' 2>/dev/null || want_apt+=(python3-zeep)
command -v geod >/dev/null || want_apt+=(proj-bin)
command -v ogrinfo >/dev/null || want_apt+=(gdal-bin)
/usr/bin/python3 -c 'import mapproxy' 2>/dev/null || want_apt+=(python3-mapproxy)
command -v docker-compose >/dev/null || want_apt+=(docker-compose)
command -v rsvg-convert >/dev/null || want_apt+=(librsvg2-bin)
command -v pdftoppm >/dev/null || want_apt+=(poppler-utils)
[[ -f /usr/include/proj.h ]] || want_apt+=(libproj-dev)
command -v chromium >/dev/null || want_apt+=(chromium)
command -v npm >/dev/null || want_apt+=(npm)
if ((${#want_apt[@]})); then
	t0=$SECONDS
	apt_install "${want_apt[@]}"
	note "apt: $((SECONDS - t0))s"
else
	note "every Debian package the tests use is installed"
fi
# playwright-core (npm) drives the map viewer in chromium (e2e/viewer_test.go).
NODE_DIR=$CACHE_DIR/node
PLAYWRIGHT_VERSION=1.57.0
if [[ ! -f $NODE_DIR/node_modules/playwright-core/package.json ]] ||
	! grep -q "\"version\": \"$PLAYWRIGHT_VERSION\"" "$NODE_DIR/node_modules/playwright-core/package.json"; then
	note "npm install playwright-core@$PLAYWRIGHT_VERSION into $NODE_DIR"
	mkdir -p "$NODE_DIR"
	npm install --no-audit --no-fund --no-save --prefix "$NODE_DIR" "playwright-core@$PLAYWRIGHT_VERSION" >/dev/null
fi
export MAPFARM_TEST_NODE_MODULES=$NODE_DIR/node_modules
# Warm the build cache for go vet (plain) and go test (-race) while MinIO builds; errors are
# reported by the steps themselves, so this one's output is only kept in the temp dir. It starts
# once apt is done (about 40 s on a fresh machine, while MinIO's build has both cores), so that
# it builds with the proj tag that vet and test use: started earlier, the 20 packages above
# internal/proj were compiled twice in each mode.
# nomsgpack: gin's MessagePack binding, which mapfarm does not use, is left out of every build
# here; it is github.com/ugorji/go/codec, about 25 CPU-seconds a build mode to compile. e2e
# builds its farm binaries with the same tag (MAPFARM_TEST_BUILD_TAGS), so gin is compiled once.
export MAPFARM_TEST_BUILD_TAGS=nomsgpack
warm_tags=(-tags "$MAPFARM_TEST_BUILD_TAGS")
[[ -f /usr/include/proj.h ]] && warm_tags=(-tags "proj,$MAPFARM_TEST_BUILD_TAGS")
# Libraries only (packages with Go files to build, not main): go build of several packages links
# every main package among them and throws the result away (8 links, about 15 CPU-seconds a
# mode); the tests link their own binaries.
(
	libs=$(go list "${warm_tags[@]}" -f '{{if and .GoFiles (ne .Name "main")}}{{.ImportPath}}{{end}}' ./...) &&
		# shellcheck disable=SC2086 # one package path a word
		go build "${warm_tags[@]}" $libs && go build "${warm_tags[@]}" -race $libs
) >"$WORK/warm-build.log" 2>&1 &
WARM_BUILD_PID=$!
PIDS+=("$WARM_BUILD_PID")
t0=$SECONDS
if ! wait "$MINIO_BUILD_PID"; then
	sed 's/^/    /' "$MINIO_BUILD_LOG" | tail -n 20
	die "could not build MinIO (scripts/minio.sh path)"
fi
note "MinIO binary ready (waited $((SECONDS - t0))s after apt)"

# ---------------------------------------------------------------- Redis

start_redis() {
	if ! command -v redis-server >/dev/null; then
		apt_install redis-server
	fi
	local attempt port pid
	for ((attempt = 1; attempt <= 3; attempt++)); do
		port=$(free_port)
		mkdir -p "$WORK/redis"
		redis-server --bind 127.0.0.1 --port "$port" --save "" --appendonly no \
			--dir "$WORK/redis" --daemonize no --logfile "$WORK/redis.log" &
		pid=$!
		if wait_for 10 "redis-server" "$pid" redis_ping "127.0.0.1:$port"; then
			PIDS+=("$pid")
			MAPFARM_TEST_REDIS=127.0.0.1:$port
			note "started redis-server $(redis-server --version | awk '{print $3}') on $MAPFARM_TEST_REDIS (pid $pid)"
			return 0
		fi
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
		tail -n 5 "$WORK/redis.log" 2>/dev/null | sed 's/^/    /' || true
	done
	die "could not start redis-server"
}

section "Redis"
if [[ -n ${MAPFARM_TEST_REDIS:-} ]]; then
	redis_ping "$MAPFARM_TEST_REDIS" || die "MAPFARM_TEST_REDIS=$MAPFARM_TEST_REDIS does not answer PING"
	note "using MAPFARM_TEST_REDIS=$MAPFARM_TEST_REDIS"
elif redis_ping "$REDIS_PROBE"; then
	MAPFARM_TEST_REDIS=$REDIS_PROBE
	note "using the Redis already running on $MAPFARM_TEST_REDIS"
else
	note "no Redis answers on $REDIS_PROBE; starting one"
	start_redis
fi
export MAPFARM_TEST_REDIS

# ---------------------------------------------------------------- PostgreSQL + PostGIS

# pg_ok DSN succeeds if a PostgreSQL answers there and can create the
# postgis extension.
pg_ok() {
	PGCONNECT_TIMEOUT=3 psql -X -At -d "$1" \
		-c "SELECT 1 FROM pg_available_extensions WHERE name = 'postgis'" 2>/dev/null | grep -qx 1
}

start_postgres() {
	local bin dir port
	bin=$(dirname "$(ls -d /usr/lib/postgresql/*/bin/initdb | sort -V | tail -n 1)")
	dir=$WORK/pg
	port=$(free_port)
	mkdir -p "$dir"
	local as=()
	if ((EUID == 0)); then
		# postgres refuses to run as root: run the cluster as the postgres user.
		chmod 711 "$WORK"
		chown postgres: "$dir"
		as=(runuser -u postgres --)
	fi
	"${as[@]}" "$bin/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --no-sync >"$WORK/pg-initdb.log" 2>&1 ||
		{ tail -n 5 "$WORK/pg-initdb.log"; die "initdb failed"; }
	"${as[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w -t 30 start \
		-o "-k $dir -p $port -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200" >/dev/null ||
		{ tail -n 5 "$dir/postgres.log"; die "could not start PostgreSQL"; }
	PIDS+=("$(head -n 1 "$dir/data/postmaster.pid")")
	MAPFARM_TEST_POSTGRES="host=127.0.0.1 port=$port user=postgres dbname=postgres sslmode=disable"
	pg_ok "$MAPFARM_TEST_POSTGRES" || die "the PostgreSQL started on port $port has no postgis"
	note "started PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port in $dir"
}

section "PostgreSQL + PostGIS"
if ! command -v psql >/dev/null || ! compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null ||
	! compgen -G "/usr/share/postgresql/*/extension/postgis.control" >/dev/null; then
	apt_install postgresql-15-postgis-3 postgresql-client-15
fi
PG_PROBE=${MAPFARM_POSTGRES_PROBE:-host=127.0.0.1 port=5432 user=postgres dbname=postgres sslmode=disable}
if [[ -n ${MAPFARM_TEST_POSTGRES:-} ]]; then
	pg_ok "$MAPFARM_TEST_POSTGRES" || die "MAPFARM_TEST_POSTGRES=$MAPFARM_TEST_POSTGRES does not answer or has no postgis"
	note "using MAPFARM_TEST_POSTGRES=$MAPFARM_TEST_POSTGRES"
elif pg_ok "$PG_PROBE"; then
	MAPFARM_TEST_POSTGRES=$PG_PROBE
	note "using the PostgreSQL already running at $PG_PROBE"
else
	note "no PostgreSQL with postgis answers at $PG_PROBE; starting a throw-away cluster"
	start_postgres
fi
export MAPFARM_TEST_POSTGRES

# ---------------------------------------------------------------- MinIO

start_minio() {
	local bin attempt port pid t0=$SECONDS
	bin=$(./scripts/minio.sh path) || die "could not build MinIO (scripts/minio.sh path)"
	note "MinIO binary: $bin (ready after $((SECONDS - t0))s)"
	MAPFARM_TEST_MINIO_ACCESS_KEY="mapfarm-$(random_hex 4)"
	MAPFARM_TEST_MINIO_SECRET_KEY="$(random_hex 16)"
	for ((attempt = 1; attempt <= 3; attempt++)); do
		port=$(free_port)
		rm -rf "$WORK/minio-data"
		mkdir -p "$WORK/minio-data"
		MINIO_ROOT_USER=$MAPFARM_TEST_MINIO_ACCESS_KEY \
			MINIO_ROOT_PASSWORD=$MAPFARM_TEST_MINIO_SECRET_KEY \
			MINIO_BROWSER=off MINIO_UPDATE=off MINIO_CI_CD=1 \
			"$bin" server --quiet --address "127.0.0.1:$port" "$WORK/minio-data" \
			>"$WORK/minio.log" 2>&1 &
		pid=$!
		if wait_for 60 "minio" "$pid" http_ok /minio/health/ready "127.0.0.1:$port"; then
			PIDS+=("$pid")
			MAPFARM_TEST_MINIO_ENDPOINT=127.0.0.1:$port
			note "started MinIO on $MAPFARM_TEST_MINIO_ENDPOINT (pid $pid, data $WORK/minio-data)"
			return 0
		fi
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
		tail -n 5 "$WORK/minio.log" 2>/dev/null | sed 's/^/    /' || true
	done
	die "could not start MinIO"
}

section "MinIO"
if [[ -n ${MAPFARM_TEST_MINIO_ENDPOINT:-} ]]; then
	[[ -n ${MAPFARM_TEST_MINIO_ACCESS_KEY:-} && -n ${MAPFARM_TEST_MINIO_SECRET_KEY:-} ]] ||
		die "MAPFARM_TEST_MINIO_ENDPOINT is set but the access or secret key is not"
	http_ok /minio/health/live "$MAPFARM_TEST_MINIO_ENDPOINT" ||
		die "MAPFARM_TEST_MINIO_ENDPOINT=$MAPFARM_TEST_MINIO_ENDPOINT is not live"
	note "using MAPFARM_TEST_MINIO_ENDPOINT=$MAPFARM_TEST_MINIO_ENDPOINT"
else
	start_minio
fi
# The binary itself, for tests that stop and restart a MinIO of their own (fault tests).
MAPFARM_TEST_MINIO_BIN=$(./scripts/minio.sh path) || die "could not build MinIO (scripts/minio.sh path)"
export MAPFARM_TEST_MINIO_BIN
export MAPFARM_TEST_MINIO_ENDPOINT MAPFARM_TEST_MINIO_ACCESS_KEY MAPFARM_TEST_MINIO_SECRET_KEY

# ---------------------------------------------------------------- Python

section "python3-zeep"
if ! /usr/bin/python3 -c 'import zeep' 2>/dev/null; then
	apt_install python3-zeep
	/usr/bin/python3 -c 'import zeep' || die "python3-zeep installed but /usr/bin/python3 cannot import zeep"
fi
export MAPFARM_TEST_PYTHON=/usr/bin/python3
note "$MAPFARM_TEST_PYTHON: zeep $(/usr/bin/python3 -c 'import zeep; print(zeep.__version__)')"

# ---------------------------------------------------------------- PROJ

# The tests build with the tag proj: projections through PROJ (internal/proj,
# docs/projections.md), which needs libproj's headers and library (proj-data
# comes with it). go run . serve needs neither: without the tag the built-in
# engine (4326 and Web Mercator) is used, and a run of its own tests it below.
section "PROJ"
if [[ ! -f /usr/include/proj.h ]]; then
	apt_install libproj-dev
fi
GO_TAGS=(-tags "proj,$MAPFARM_TEST_BUILD_TAGS")
# Flags of every test build:
#  - test binaries are linked without DWARF (-ldflags=-w): stack traces and panics read the symbol
#    table, which stays; linking a race-built test binary then takes about half the CPU (5.4 s →
#    3.0 s for internal/mapserver), some 50 binaries a run;
#  - -vet=off: go test's own vet (a subset of go vet's analyzers) would check again what the go
#    vet step checks over the same packages and their test files; in the race build's
#    configuration it cost about 30 CPU-seconds with an empty build cache (26 user + 4 sys).
TEST_BUILD=(-ldflags=-w -vet=off)
note "libproj $(pkg-config --modversion proj 2>/dev/null || echo '(version unknown)'); go vet and go test use ${GO_TAGS[*]}"

# ---------------------------------------------------------------- reference tools

# Independent tools the tests compare against: PROJ's geod (geodesic distances), GDAL's
# ogrinfo/ogr2ogr (query results), MapProxy (tile cache interoperability), docker-compose
# (validates deploy/docker-compose.yml without a Docker engine), rsvg-convert and pdftoppm
# (decode the SVG and PDF map images).
section "reference tools"
missing=()
command -v geod >/dev/null || missing+=(proj-bin)
command -v ogrinfo >/dev/null || missing+=(gdal-bin)
/usr/bin/python3 -c 'import mapproxy' 2>/dev/null || missing+=(python3-mapproxy)
command -v docker-compose >/dev/null || missing+=(docker-compose)
command -v rsvg-convert >/dev/null || missing+=(librsvg2-bin)
command -v pdftoppm >/dev/null || missing+=(poppler-utils)
if ((${#missing[@]})); then
	apt_install "${missing[@]}"
fi
note "geod, ogrinfo, mapproxy, docker-compose, rsvg-convert and pdftoppm present"

export MAPFARM_REQUIRE_SERVICES=1

# ---------------------------------------------------------------- checks

FAILED=()
run_step() {
	local name=$1 t0=$SECONDS
	shift
	section "$name"
	if "$@"; then
		note "$name: ok ($((SECONDS - t0))s)"
	else
		note "$name: FAILED ($((SECONDS - t0))s)"
		FAILED+=("$name")
	fi
}

gofmt_check() {
	local files
	files=$(go list -e "${GO_TAGS[@]}" -f '{{$d := .Dir}}{{range .GoFiles}}{{$d}}/{{.}} {{end}}{{range .TestGoFiles}}{{$d}}/{{.}} {{end}}{{range .XTestGoFiles}}{{$d}}/{{.}} {{end}}{{range .IgnoredGoFiles}}{{$d}}/{{.}} {{end}}' "${PKGS[@]}") || return 1
	[[ -z ${files// /} ]] && return 0
	local bad gofmt
	# gofmt from the toolchain that runs the tests, whatever else is on PATH.
	gofmt="$(go env GOROOT)/bin/gofmt"
	[[ -x $gofmt ]] || gofmt=gofmt
	# shellcheck disable=SC2086 # file paths contain no spaces in this repo
	if ! bad=$("$gofmt" -l $files 2>&1); then
		echo "gofmt failed:"
		printf '%s\n' "$bad" | sed 's/^/    /'
		return 1
	fi
	if [[ -n $bad ]]; then
		echo "not gofmt-formatted (run gofmt -w):"
		printf '%s\n' "$bad" | sed 's/^/    /'
		return 1
	fi
}

# fuzz_prebuild compiles each fuzz target's instrumented test binary (and runs its seed corpus
# once), at low priority, while go test runs: go test leaves a core idle at times (e2e waits on
# leases, restarts and separate processes), and the fuzz smoke then spends its time fuzzing,
# not compiling (about 120 s of a fresh machine's run). Failures show again in fuzz_smoke.
fuzz_prebuild() {
	local target pkg name
	for target in "${FUZZ_TARGETS[@]}"; do
		IFS=: read -r pkg name _ <<<"$target"
		nice -n 15 go test "${TEST_BUILD[@]}" -run '^$' -fuzz "^${name}\$" -fuzztime 1x "$pkg" >/dev/null 2>&1 || true
	done
}

fuzz_smoke() {
	local target pkg name runs budget rc=0
	for target in "${FUZZ_TARGETS[@]}"; do
		IFS=: read -r pkg name runs <<<"$target"
		budget=${FUZZ_TIME:-${runs:-100000}x}
		note "fuzz $pkg $name for $budget"
		# Minimizing a new input is bounded in runs too. A hang ends at -timeout (FuzzReadRequest
		# also panics on an input read for 2 s).
		go test "${TEST_BUILD[@]}" -run '^$' -fuzz "^${name}\$" -fuzztime "$budget" -fuzzminimizetime 200x -timeout 5m "$pkg" || rc=1
	done
	return "$rc"
}

# The order of the steps below. The tests run in two sets at once: the race set in the
# foreground and the plain set (e2e and the data providers) in the background, since e2e spends
# much of its time waiting (leases, restarts, separate processes) and the race set's tail is one
# long package on one core. go vet, deadcode and the fuzz smoke run once the race set is done,
# in e2e's waits, rather than before the tests on a machine with nothing else to do. In a full
# run, e2e's TestHostile, which holds every hostile request to the issue's 2 s answer, runs last,
# on its own.
#
#   gofmt → race set ‖ plain set ─┬→ go vet → deadcode → built-in engine → fuzz smoke ─┬→ TestHostile
#                                 └──────────── plain set (e2e) goes on ───────────────┘
t0=$SECONDS
wait "$WARM_BUILD_PID" || true # its failures show again, with context, in go vet and go test
note "warm-up build done (waited $((SECONDS - t0))s)"
run_step "gofmt" gofmt_check

# deadcode_check fails when a function or method is reachable neither from main nor from a
# test (golang.org/x/tools/cmd/deadcode, pinned, built once into the cache): what nothing calls
# goes, rather than waiting as a stub. Whole-program, so only in full runs.
DEADCODE_VERSION=v0.52.0
deadcode_check() {
	local bin=$CACHE_DIR/bin/deadcode-$DEADCODE_VERSION out
	if [[ ! -x $bin ]]; then
		mkdir -p "$CACHE_DIR/bin"
		env -u GOFLAGS GOBIN="$WORK/gobin" go install "golang.org/x/tools/cmd/deadcode@$DEADCODE_VERSION" || return 1
		mv -f "$WORK/gobin/deadcode" "$bin"
	fi
	out=$("$bin" -test ./...) || return 1
	if [[ -n $out ]]; then
		echo "unreachable functions (remove them, or call them):"
		printf '%s\n' "$out" | sed 's/^/    /'
		return 1
	fi
}

# go test: every package under the race detector, except the end-to-end tests, which drive
# separate processes and real servers (the race detector would only slow their clients down),
# and the two data providers, whose tests are long single-goroutine scans of real databases
# (their concurrent use, a draw's scan in a goroutine of its own, runs under the race detector
# in internal/mapdraw and internal/mapserver). That keeps a full run under 10 minutes on 2 cores.
PLAIN_PKGS=()
PLAIN_PID=
PREBUILD_PID=
HOSTILE_APART=0
go_test_race() {
	local race=() p rc=0 quiet=()
	while read -r p; do
		case $p in
		*/e2e | */internal/feature/gpkg | */internal/feature/postgis) PLAIN_PKGS+=("$p") ;;
		*) race+=("$p") ;;
		esac
	done < <(go list "${PKGS[@]}")
	if ((FULL_RUN)) && [[ $FUZZ_TIME != 0 ]] && ((${#FUZZ_TARGETS[@]} > 0)); then
		fuzz_prebuild &
		PREBUILD_PID=$!
		PIDS+=("$PREBUILD_PID")
	fi
	if ((FULL_RUN)) && [[ " ${PLAIN_PKGS[*]} " == *"/e2e "* ]]; then
		HOSTILE_APART=1
		quiet=(-skip '^TestHostile$')
	fi
	if ((${#PLAIN_PKGS[@]} > 0)); then
		note "the plain set runs meanwhile (${PLAIN_PKGS[*]}); its output follows when it ends"
		# shellcheck disable=SC2086 # word splitting intended
		{
			go test "${GO_TAGS[@]}" "${TEST_BUILD[@]}" -count=1 -timeout "$GO_TEST_TIMEOUT" ${MAPFARM_GO_TEST_FLAGS:-} "${quiet[@]}" "${PLAIN_PKGS[@]}" >"$WORK/go-test-plain.log" 2>&1
			plain_rc=$?
			echo "$((SECONDS - SCRIPT_START))" >"$WORK/plain-end"
			exit "$plain_rc"
		} &
		PLAIN_PID=$!
		PIDS+=("$PLAIN_PID")
	fi
	if ((${#race[@]} > 0)); then
		# shellcheck disable=SC2086 # word splitting intended
		go test "${GO_TAGS[@]}" "${TEST_BUILD[@]}" -count=1 -race -timeout "$GO_TEST_TIMEOUT" ${MAPFARM_GO_TEST_FLAGS:-} "${race[@]}" || rc=1
	fi
	return "$rc"
}

# go_test_plain waits for the plain set, prints its output, and in a full run runs TestHostile.
go_test_plain() {
	local rc=0
	if [[ -n $PLAIN_PID ]]; then
		wait "$PLAIN_PID" || rc=1
		note "the plain set ended at $(cat "$WORK/plain-end" 2>/dev/null || echo '?')s"
		cat "$WORK/go-test-plain.log"
	fi
	if ((HOSTILE_APART)); then
		note "TestHostile, on its own"
		go test "${GO_TAGS[@]}" "${TEST_BUILD[@]}" -count=1 -timeout "$GO_TEST_TIMEOUT" -run '^TestHostile$' ./e2e || rc=1
	fi
	return "$rc"
}

run_step "go test (race set)" go_test_race
run_step "go vet" go vet "${GO_TAGS[@]}" "${PKGS[@]}"
if ((FULL_RUN)); then
	run_step "deadcode" deadcode_check
fi
# The built-in engine (no tag): what go run . serve uses. Its own tests here; e2e builds the
# binary without the tag.
run_step "built-in projection engine" bash -c 'go vet ./internal/proj && go test -vet=off -count=1 ./internal/proj'
if ((FULL_RUN == 0)); then
	section "fuzz smoke"
	note "skipped: packages were named on the command line"
elif [[ $FUZZ_TIME == 0 ]]; then
	section "fuzz smoke"
	note "skipped: MAPFARM_FUZZ_TIME=0"
elif ((${#FUZZ_TARGETS[@]} == 0)); then
	section "fuzz smoke"
	note "no fuzz targets listed (FUZZ_TARGETS in scripts/test.sh)"
else
	if [[ -n $PREBUILD_PID ]]; then
		t0=$SECONDS
		wait "$PREBUILD_PID" || true
		note "fuzz prebuild done (waited $((SECONDS - t0))s)"
	fi
	run_step "fuzz smoke" fuzz_smoke
fi
run_step "go test (plain set)" go_test_plain

section "summary"
note "total $((SECONDS - SCRIPT_START))s"
if ((${#FAILED[@]} > 0)); then
	for log in "$WORK"/redis.log "$WORK"/minio.log "$WORK"/pg/postgres.log; do
		[[ -s $log ]] || continue
		note "last lines of $(basename "$log"):"
		tail -n 15 "$log" | sed 's/^/    /'
	done
	note "FAILED: ${FAILED[*]}"
	exit 1
fi
note "all passed"
