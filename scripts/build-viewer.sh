#!/usr/bin/env bash
# scripts/build-viewer.sh: rebuild the map viewer's assets (internal/viewer/assets/viewer.js and
# viewer.css) from web/viewer/src with OpenLayers and esbuild from npm, at the versions pinned in
# web/viewer/package-lock.json. The built files are committed, so building and running mapfarm
# needs no npm; run this only after changing web/viewer (see docs/viewer.md).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../web/viewer"
npm ci --no-audit --no-fund
out=../../internal/viewer/assets
./node_modules/.bin/esbuild src/main.js --bundle --minify --format=iife --target=es2020 \
	--legal-comments=none --outfile="$out/viewer.js"
cp node_modules/ol/LICENSE.md "$out/LICENSE-openlayers.md"
echo "built $out/viewer.js $out/viewer.css"
