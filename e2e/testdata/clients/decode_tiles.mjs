// decode_tiles.mjs: a second decoder of the farm's vector tiles, Mapbox's own
// (@mapbox/vector-tile with pbf), for e2e/clients_test.go:
//
//   node decode_tiles.mjs <tile URL template with {z}, {x} and {y}> <zoom>
//
// It fetches every tile of the level (8 at a time), decodes each layer and each feature's
// geometry, and prints JSON: per tile "z/x/y", its HTTP status and per layer the version, extent,
// feature count, the features' ids and geometry types, and the points of the geometries.
import {createRequire} from 'module';
import {pathToFileURL} from 'url';

// ES modules do not search NODE_PATH: resolve the packages from it.
const require = createRequire(process.env.NODE_PATH.split(':')[0] + '/');
const load = (name) => import(pathToFileURL(require.resolve(name)).href);
const {VectorTile} = await load('@mapbox/vector-tile');
const {PbfReader} = await load('pbf');

const [template, zoomArg] = process.argv.slice(2);
const z = Number(zoomArg);
const n = 1 << z;
const coords = [];
for (let x = 0; x < n; x++) for (let y = 0; y < n; y++) coords.push([x, y]);

async function decode([x, y]) {
  const url = template.replace('{z}', z).replace('{x}', x).replace('{y}', y);
  const res = await fetch(url);
  const tile = {status: res.status, bytes: 0, layers: {}};
  if (!res.ok) return tile;
  const buf = new Uint8Array(await res.arrayBuffer());
  tile.bytes = buf.length;
  const t = new VectorTile(new PbfReader(buf));
  for (const [name, layer] of Object.entries(t.layers)) {
    const l = {version: layer.version, extent: layer.extent, features: layer.length, ids: [], types: [], points: 0};
    for (let i = 0; i < layer.length; i++) {
      const f = layer.feature(i);
      l.ids.push(f.id);
      l.types.push(f.type);
      for (const part of f.loadGeometry()) l.points += part.length;
    }
    tile.layers[name] = l;
  }
  return tile;
}

const out = {};
let next = 0;
async function worker() {
  while (next < coords.length) {
    const c = coords[next++];
    out[`${z}/${c[0]}/${c[1]}`] = await decode(c);
  }
}
await Promise.all(Array.from({length: 8}, worker));
process.stdout.write(JSON.stringify(out));
