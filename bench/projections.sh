#!/usr/bin/env bash
# bench/projections.sh: what projecting on the fly costs. The world countries 1024×768 drawn
# from data stored in Web Mercator into EPSG:4326, Equal Earth (8857), Robinson (54030) and LAEA
# Europe (3035), against the same data stored in the target system: CPU per draw, side by side,
# and the ratio (docs/projections.md). Needs PROJ's headers (libproj-dev; scripts/test.sh installs
# it) for the build tag proj.
#
#   bash bench/projections.sh            # 5 rounds of 50 draws each
#   COUNT=3 BENCHTIME=20x bash bench/projections.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
[[ -f /usr/include/proj.h ]] || { echo "bench/projections.sh: libproj-dev is not installed (apt-get install libproj-dev)" >&2; exit 1; }
echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg)"
go test -tags proj ./internal/mapdraw -run '^$' -bench WorldProjected -benchtime "${BENCHTIME:-50x}" -count "${COUNT:-5}"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
