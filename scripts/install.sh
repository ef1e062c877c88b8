#!/usr/bin/env bash
# scripts/install.sh: install what the tests need and a fresh Debian 12 machine lacks. Idempotent:
# what is in place is left alone, so a second run takes a second.
#
#   scripts/install.sh            # everything: the MinIO build overlapped with the packages
#   scripts/install.sh packages   # Debian packages (one apt-get install) and playwright-core (npm)
#   scripts/install.sh minio      # the pinned MinIO server, built once (scripts/minio.sh path);
#                                 # prints its path, waiting for a build already under way
#
# Packages: redis-server, postgresql-15-postgis-3 and postgresql-client-15, python3-zeep,
# proj-bin, gdal-bin, python3-mapproxy, python3-owslib, docker-compose, librsvg2-bin, poppler-utils, libproj-dev,
# mapserver-bin (UMN MapServer's map2img, for the renderer's differential tests), chromium and npm, each only when what the tests use of it is missing; then playwright-core
# (pinned below) into $MAPFARM_CACHE/node for the map viewer test. apt needs root or
# passwordless sudo. scripts/test.sh runs this first; see docs/testing.md.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
: "${HOME:=$(cd ~ && pwd)}"
CACHE_DIR=${MAPFARM_CACHE:-$HOME/.cache/mapfarm}
PLAYWRIGHT_VERSION=1.57.0
# The style specification's own validator (gl-style-validate) checks the generated vector-tile
# styles (internal/vectorstyle).
STYLE_SPEC_VERSION=26.6.0
REDIS_PROBE=${MAPFARM_REDIS_PROBE:-127.0.0.1:6379}

note() { printf '  %s\n' "$*"; }
die() { printf 'install.sh: %s\n' "$*" >&2; exit 1; }

apt_install() {
	local sudo=()
	if ((EUID != 0)); then
		command -v sudo >/dev/null || die "need root or sudo to apt-get install $*"
		sudo=(sudo -n)
	fi
	command -v apt-get >/dev/null || die "apt-get not found; install $* by hand"
	note "apt-get update"
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
	note "apt-get install $*"
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# redis_ping HOST:PORT succeeds if a Redis answers PING there (bash only).
redis_ping() {
	timeout 3 bash -c '
		exec 3<>"/dev/tcp/$0/$1" || exit 1
		printf "PING\r\n" >&3
		IFS= read -r -t 2 line <&3 || exit 1
		[[ $line == +PONG* ]]
	' "${1%:*}" "${1##*:}" 2>/dev/null
}

packages() {
	local want=() t0=$SECONDS
	if [[ -z ${MAPFARM_TEST_REDIS:-} ]] && ! command -v redis-server >/dev/null && ! redis_ping "$REDIS_PROBE"; then
		want+=(redis-server)
	fi
	if ! command -v psql >/dev/null || ! compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null ||
		! compgen -G "/usr/share/postgresql/*/extension/postgis.control" >/dev/null; then
		want+=(postgresql-15-postgis-3 postgresql-client-15)
	fi
	/usr/bin/python3 -c 'import zeep' 2>/dev/null || want+=(python3-zeep)
	command -v geod >/dev/null || want+=(proj-bin)
	command -v ogrinfo >/dev/null || want+=(gdal-bin)
	/usr/bin/python3 -c 'import mapproxy' 2>/dev/null || want+=(python3-mapproxy)
	/usr/bin/python3 -c 'import owslib' 2>/dev/null || want+=(python3-owslib)
	command -v docker-compose >/dev/null || want+=(docker-compose)
	command -v rsvg-convert >/dev/null || want+=(librsvg2-bin)
	command -v pdftoppm >/dev/null || want+=(poppler-utils)
	command -v map2img >/dev/null || want+=(mapserver-bin)
	[[ -f /usr/include/proj.h ]] || want+=(libproj-dev)
	command -v chromium >/dev/null || want+=(chromium)
	command -v npm >/dev/null || want+=(npm)
	if ((${#want[@]})); then
		apt_install "${want[@]}"
		note "apt: $((SECONDS - t0))s"
	else
		note "every Debian package the tests use is installed"
	fi
	# playwright-core (npm) drives the map viewer in chromium (e2e/viewer_test.go).
	local node=$CACHE_DIR/node
	if [[ ! -f $node/node_modules/playwright-core/package.json ]] ||
		! grep -q "\"version\": \"$PLAYWRIGHT_VERSION\"" "$node/node_modules/playwright-core/package.json"; then
		note "npm install playwright-core@$PLAYWRIGHT_VERSION into $node"
		mkdir -p "$node"
		npm install --no-audit --no-fund --no-save --prefix "$node" "playwright-core@$PLAYWRIGHT_VERSION" >/dev/null
	fi
	local spec=$node/node_modules/@maplibre/maplibre-gl-style-spec/package.json
	if [[ ! -f $spec ]] || ! grep -q "\"version\": \"$STYLE_SPEC_VERSION\"" "$spec"; then
		note "npm install @maplibre/maplibre-gl-style-spec@$STYLE_SPEC_VERSION into $node"
		mkdir -p "$node"
		npm install --no-audit --no-fund --no-save --prefix "$node" "playwright-core@$PLAYWRIGHT_VERSION" "@maplibre/maplibre-gl-style-spec@$STYLE_SPEC_VERSION" >/dev/null
	fi
}

case ${1:-all} in
packages) packages ;;
minio) exec ./scripts/minio.sh path ;;
all)
	log=$(mktemp "${TMPDIR:-/tmp}/mapfarm-minio-build.XXXXXX")
	./scripts/minio.sh path >"$log" 2>&1 &
	minio_pid=$!
	packages
	if ! wait "$minio_pid"; then
		sed 's/^/    /' "$log" | tail -n 20
		rm -f "$log"
		die "could not build MinIO (scripts/minio.sh path)"
	fi
	note "MinIO: $(tail -n 1 "$log")"
	rm -f "$log"
	;;
*)
	sed -n '2,15p' "$0" >&2
	exit 2
	;;
esac
