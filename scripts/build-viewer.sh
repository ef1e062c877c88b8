#!/usr/bin/env bash
# scripts/build-viewer.sh: rebuild the map viewer's assets (internal/viewer/assets/viewer.js,
# viewer.css and fonts.css) from web/viewer/src with OpenLayers, ol-mapbox-style and esbuild from npm, at the versions pinned in
# web/viewer/package-lock.json, and list the npm packages bundled in them with their licences
# (internal/viewer/assets/THIRD-PARTY.md). The built files are committed, so building and running
# mapfarm needs no npm; run this only after changing web/viewer (see docs/viewer.md).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../web/viewer"
npm ci --no-audit --no-fund
out=../../internal/viewer/assets
meta=$(mktemp)
trap 'rm -f "$meta"' EXIT
./node_modules/.bin/esbuild src/main.js --bundle --minify --format=iife --target=es2020 \
	--legal-comments=none --metafile="$meta" --outfile="$out/viewer.js"
cp node_modules/ol/LICENSE.md "$out/LICENSE-openlayers.md"
cp src/fonts.css "$out/fonts.css"
node -e '
const meta = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
const pkgs = new Set();
for (const input of Object.keys(meta.inputs)) {
  const m = input.match(/node_modules\/((@[^/]+\/)?[^/]+)/);
  if (m) pkgs.add(m[1]);
}
const lines = ["# npm packages bundled in viewer.js and viewer.css", "",
  "Written by scripts/build-viewer.sh. OpenLayers licence: LICENSE-openlayers.md.", "",
  "| package | version | licence |", "|---|---|---|"];
for (const p of [...pkgs].sort()) {
  const j = require("./node_modules/" + p + "/package.json");
  lines.push(`| ${p} | ${j.version} | ${j.license} |`);
}
process.stdout.write(lines.join("\n") + "\n");
' "$meta" >"$out/THIRD-PARTY.md"
echo "built $out/viewer.js $out/viewer.css $out/THIRD-PARTY.md"
