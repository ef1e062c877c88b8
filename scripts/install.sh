#!/usr/bin/env bash
# scripts/install.sh: install what the tests need and a fresh Debian 12 machine lacks. Idempotent:
# what is in place is left alone, so a second run takes a second.
#
#   scripts/install.sh            # everything: the MinIO build overlapped with the packages
#   scripts/install.sh packages   # Debian packages (one apt-get install) and the npm packages
#   scripts/install.sh minio      # the pinned MinIO server, built once (scripts/minio.sh path);
#                                 # prints its path, waiting for a build already under way
#   scripts/install.sh arcgis     # the ArcGIS Maps SDK (ARCGIS_PACKAGES, npm pack) alone; prints
#                                 # the node_modules it is in (packages installs it too)
#
# Packages: redis-server, postgresql-15-postgis-3 and postgresql-client-15, python3-zeep,
# proj-bin, gdal-bin, python3-mapproxy, python3-owslib, docker-compose, librsvg2-bin, poppler-utils, libproj-dev,
# mapserver-bin (UMN MapServer's map2img, for the renderer's differential tests), chromium and
# npm, each only when what the tests use of it is missing; then the npm packages
# (NPM_PACKAGES, pinned below) into $MAPFARM_CACHE/node for the browser tests, and the ArcGIS
# Maps SDK (ARCGIS_PACKAGES) into $MAPFARM_CACHE/node-arcgis. apt needs root or
# passwordless sudo. scripts/test.sh runs this first; see docs/testing.md.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
: "${HOME:=$(cd ~ && pwd)}"
CACHE_DIR=${MAPFARM_CACHE:-$HOME/.cache/mapfarm}
# npm packages of the tests, into $CACHE_DIR/node:
# - playwright-core drives Debian's chromium (e2e/viewer_test.go, e2e/clients_test.go);
# - the style specification's own validator (gl-style-validate) checks the generated vector-tile
#   styles (internal/vectorstyle);
# - esbuild bundles the web map clients that e2e/clients_test.go runs in chromium (OpenLayers,
#   MapLibre GL JS) into files the test serves itself: nothing loads from a CDN;
# - @mapbox/vector-tile with pbf is the second decoder of the vector tiles (e2e/clients_test.go);
# - pmtiles, the PMTiles format's reference reader, checks the archives cachetool export writes
#   (internal/tilearchive).
NPM_PACKAGES=(
	playwright-core@1.57.0
	@maplibre/maplibre-gl-style-spec@26.6.0
	esbuild@0.24.0
	ol@10.2.1
	maplibre-gl@5.24.1
	@mapbox/vector-tile@3.0.0
	pbf@5.1.2
	pmtiles@4.5.0
)
# The ArcGIS Maps SDK for JavaScript (e2e TestWebClients' VectorTileLayer page), into
# $CACHE_DIR/node-arcgis: @arcgis/core and the packages its modules import when a MapView draws
# a VectorTileLayer, at the versions npm resolves for @arcgis/core 5.1.25, each fetched with
# `npm pack` and unpacked without its type declarations and source maps. Not `npm install
# @arcgis/core`: that also installs the dependencies of its charts, tables and exports (amcharts,
# vaadin, zip.js, …), 390 MB and 18 CPU-seconds here against 165 MB and 7 (docs/web-clients.md).
# A package the page loads and this list lacks fails the test (an import the page cannot resolve).
ARCGIS_PACKAGES=(
	@arcgis/core@5.1.25
	@arcgis/lumina@5.1.25
	@arcgis/toolkit@5.1.25
	@esri/arcgis-html-sanitizer@4.1.0
	@esri/calcite-components@5.1.2
	@lit/reactive-element@2.1.2
	lit@3.3.3
	lit-element@4.2.2
	lit-html@3.3.3
	luxon@3.7.2
	tslib@2.9.1
)
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
	# The npm packages, pinned: one `npm install` of all of them when any is missing or of another
	# version (npm removes what a later install does not name).
	local node=$CACHE_DIR/node spec name version missing=()
	for spec in "${NPM_PACKAGES[@]}"; do
		name=${spec%@*} version=${spec##*@}
		if [[ ! -f $node/node_modules/$name/package.json ]] ||
			! grep -q "\"version\": \"$version\"" "$node/node_modules/$name/package.json"; then
			missing+=("$spec")
		fi
	done
	if ((${#missing[@]})); then
		note "npm install ${missing[*]} (with the rest of the pinned packages) into $node"
		mkdir -p "$node"
		npm install --no-audit --no-fund --no-save --prefix "$node" "${NPM_PACKAGES[@]}" >/dev/null
	fi
	arcgis >/dev/null
}

# arcgis unpacks the ARCGIS_PACKAGES missing (or of another version) from $CACHE_DIR/node-arcgis
# into it, one `npm pack` of them all, and prints its node_modules.
arcgis() {
	local nm=$CACHE_DIR/node-arcgis/node_modules spec name missing=() tmp f
	for spec in "${ARCGIS_PACKAGES[@]}"; do
		name=${spec%@*}
		if [[ ! -f $nm/$name/package.json ]] || ! grep -q "\"version\": \"${spec##*@}\"" "$nm/$name/package.json"; then
			missing+=("$spec")
		fi
	done
	if ((${#missing[@]})); then
		note "npm pack ${missing[*]} into $nm" >&2
		tmp=$(mktemp -d "${TMPDIR:-/tmp}/mapfarm-arcgis.XXXXXX")
		(cd "$tmp" && npm pack --silent "${missing[@]}" >/dev/null)
		for spec in "${missing[@]}"; do
			name=${spec%@*}
			# npm pack names a tarball <name without @, / as ->-<version>.tgz.
			f=$tmp/$(printf %s "${name#@}" | tr / -)-${spec##*@}.tgz
			rm -rf "${nm:?}/$name"
			mkdir -p "$nm/$name"
			tar xzf "$f" -C "$nm/$name" --strip-components=1 --exclude='*.d.ts' --exclude='*.d.cts' --exclude='*.map'
		done
		rm -rf "$tmp"
	fi
	echo "$nm"
}

case ${1:-all} in
packages) packages ;;
arcgis) arcgis ;;
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
	sed -n '2,17p' "$0" >&2
	exit 2
	;;
esac
