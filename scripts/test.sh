#!/usr/bin/env bash
# scripts/test.sh: the test command (what CI runs, through .ci/run).
#
#   ./scripts/test.sh                      # everything: gofmt, stale words, go test (-race but e2e
#                                          # and the data providers), go vet, deadcode, fuzz smoke
#   ./scripts/test.sh ./internal/blob/...  # only these packages (no deadcode, no fuzz smoke)
#   ./scripts/test.sh -n [packages]        # print the schedule and its commands; run nothing
#
# Two steps: scripts/install.sh installs what a fresh Debian 12 machine lacks (the MinIO build in
# the background, left running while the tests start; the packages in the foreground), then the
# runner, internal/testenv/cmd/testrun, finds or starts Redis, PostgreSQL+PostGIS and MinIO on
# loopback, exports MAPFARM_TEST_* and MAPFARM_REQUIRE_SERVICES=1, runs the steps in their
# order and stops what it started. Options are environment variables: see docs/testing.md.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
: "${HOME:=$(cd ~ && pwd)}"
MAPFARM_TEST_START=$(date +%s)
export MAPFARM_TEST_START
command -v go >/dev/null || { echo "test.sh: go is not on PATH" >&2; exit 1; }
if [[ ${1:-} != -n ]]; then
	printf '\n==== Go (at 0s) ====\n'
	go version
	printf '\n==== installs (at %ds) ====\n' "$(($(date +%s) - MAPFARM_TEST_START))"
	# The MinIO build (CPU) overlaps apt and npm (network and disk);
	# the runner waits for it (scripts/install.sh minio takes the build's lock).
	./scripts/install.sh minio >/dev/null 2>&1 &
	./scripts/install.sh packages
fi
# Built, not go run: go run would not pass a SIGTERM on to the runner, which stops the servers.
# One binary per checkout, so that two checkouts' runs do not swap runners.
runner=${MAPFARM_CACHE:-$HOME/.cache/mapfarm}/bin/testrun-$(pwd | cksum | cut -d' ' -f1)
mkdir -p "$(dirname "$runner")"
go build -o "$runner" ./internal/testenv/cmd/testrun
exec "$runner" "$@"
