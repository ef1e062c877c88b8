// ol.js: an OpenLayers map drawing one source of the farm, chosen by the page's query string
// (driver.js bundles it; e2e/clients_test.go names the jobs):
//
//   mode=ImageWMS|TileWMS  url=<WMSServer URL> layers=<LAYERS> projection=EPSG:3857|EPSG:4326
//   mode=OGCMapTile        url=<OGC API map tileset URL>
//   mode=MVT               url=<XYZ template of .pbf tiles>
//
// When the source is ready and the map has then finished drawing ('rendercomplete') it sets
// window.clientResult to {loaded, errors}: how many images or tiles loaded and the load errors.
import Map from 'ol/Map.js';
import View from 'ol/View.js';
import ImageLayer from 'ol/layer/Image.js';
import TileLayer from 'ol/layer/Tile.js';
import VectorTileLayer from 'ol/layer/VectorTile.js';
import ImageWMS from 'ol/source/ImageWMS.js';
import TileWMS from 'ol/source/TileWMS.js';
import OGCMapTile from 'ol/source/OGCMapTile.js';
import VectorTileSource from 'ol/source/VectorTile.js';
import MVT from 'ol/format/MVT.js';
import {Fill, Stroke, Style} from 'ol/style.js';

const q = new URLSearchParams(location.search);
const mode = q.get('mode');
const projection = q.get('projection') || 'EPSG:3857';
const result = {mode, loaded: 0, errors: []};
const loaded = () => result.loaded++;
const failed = (e) => result.errors.push(String(e.type) + ' ' + (e.tile ? e.tile.getTileCoord().join('/') : ''));

let layer;
switch (mode) {
  case 'ImageWMS': {
    const source = new ImageWMS({
      url: q.get('url'),
      params: {LAYERS: q.get('layers'), VERSION: q.get('version') || '1.3.0'},
      projection,
      ratio: 1,
      crossOrigin: 'anonymous',
    });
    source.on('imageloadend', loaded);
    source.on('imageloaderror', failed);
    layer = new ImageLayer({source});
    break;
  }
  case 'TileWMS': {
    const source = new TileWMS({
      url: q.get('url'),
      params: {LAYERS: q.get('layers'), VERSION: q.get('version') || '1.3.0', TILED: true},
      projection,
      crossOrigin: 'anonymous',
    });
    source.on('tileloadend', loaded);
    source.on('tileloaderror', failed);
    layer = new TileLayer({source});
    break;
  }
  case 'OGCMapTile': {
    const source = new OGCMapTile({url: q.get('url'), mediaType: 'image/png', crossOrigin: 'anonymous'});
    source.on('tileloadend', loaded);
    source.on('tileloaderror', failed);
    layer = new TileLayer({source});
    break;
  }
  case 'MVT': {
    const source = new VectorTileSource({format: new MVT(), url: q.get('url'), maxZoom: 14});
    source.on('tileloadend', loaded);
    source.on('tileloaderror', failed);
    const style = new Style({fill: new Fill({color: 'rgba(200,120,40,0.8)'}), stroke: new Stroke({color: '#333', width: 1})});
    layer = new VectorTileLayer({source, style});
    break;
  }
  default:
    window.clientResult = {error: 'unknown mode ' + mode};
}

if (layer) {
  // The world fills the map: square in Web Mercator, 2:1 in EPSG:4326 (OpenLayers shows nothing
  // beyond ±90° of latitude).
  if (projection === 'EPSG:4326') document.getElementById('map').style.height = '256px';
  const map = new Map({
    target: 'map',
    layers: [layer],
    controls: [],
    view: new View({projection, center: [0, 0], zoom: 0}),
  });
  const world = projection === 'EPSG:4326' ? [-180, -90, 180, 90] : [-20037508.34, -20037508.34, 20037508.34, 20037508.34];
  map.getView().fit(world, {size: map.getSize()});
  // A source that reads a document first (OGCMapTile's tileset) is not ready at once, and the
  // map completes a render of nothing before it is: wait for the source, then for a render.
  const source = layer.getSource();
  const whenReady = () => {
    if (source.getState() === 'error') {
      window.clientResult = {error: 'the source failed to load'};
    } else if (source.getState() !== 'ready') {
      source.once('change', whenReady);
    } else {
      map.once('rendercomplete', () => {
        window.clientResult = result;
      });
      map.render();
    }
  };
  whenReady();
}
