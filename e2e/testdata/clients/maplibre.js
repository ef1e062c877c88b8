// maplibre.js: a MapLibre GL JS map of a VectorTileServer's style (driver.js bundles it;
// e2e/clients_test.go names the jobs). Query string:
//
//   style=<resources/styles/root.json URL>  [tilejson=<TileJSON URL>: every vector source of the
//   style is replaced by {type: vector, url: tilejson}]  lon, lat, zoom: the view's centre and
//   zoom  qlon, qlat: the point queryRenderedFeatures asks at
//
// When the map is idle (every tile and glyph loaded and drawn) it sets window.clientResult to
// {errors, features, symbols}: the map's error events, the features rendered at the query point
// (source layer, id, properties) and how many label (symbol) features are rendered in the view.
import maplibregl from 'maplibre-gl';

const q = new URLSearchParams(location.search);
const result = {errors: [], features: [], symbols: 0, labels: []};

async function style() {
  const res = await fetch(q.get('style'));
  if (!res.ok) throw new Error(`style: ${res.status}`);
  const s = await res.json();
  const tilejson = q.get('tilejson');
  if (tilejson) {
    for (const [name, src] of Object.entries(s.sources)) {
      if (src.type === 'vector') s.sources[name] = {type: 'vector', url: tilejson};
    }
  }
  return s;
}

style().then((s) => {
  const map = new maplibregl.Map({
    container: 'map',
    style: s,
    center: [Number(q.get('lon')), Number(q.get('lat'))],
    zoom: Number(q.get('zoom')),
    attributionControl: false,
    fadeDuration: 0,
  });
  map.on('error', (e) => result.errors.push(String(e.error && e.error.message ? e.error.message : e.error)));
  map.once('load', () => {
    map.once('idle', () => {
      const p = map.project([Number(q.get('qlon')), Number(q.get('qlat'))]);
      result.features = map.queryRenderedFeatures(p).map((f) => ({
        layer: f.layer.id, sourceLayer: f.sourceLayer, id: f.id, properties: f.properties,
      }));
      const symbols = map.queryRenderedFeatures().filter((f) => f.layer.type === 'symbol');
      result.symbols = symbols.length;
      result.labels = symbols.slice(0, 20).map((f) => f.properties[Object.keys(f.properties)[0]]);
      window.clientResult = result;
    });
  });
}).catch((e) => {
  window.clientResult = {error: String(e)};
});
