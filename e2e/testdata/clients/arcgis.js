// arcgis.js: the ArcGIS Maps SDK for JavaScript (@arcgis/core) drawing a VectorTileServer with its
// VectorTileLayer, as an ArcGIS user adds one (driver.js loads it unbundled: the SDK's own ES
// modules and assets from node_modules through an import map; e2e/clients_test.go). Query string: url=<the
// VectorTileServer URL>. When the view has drawn every tile (not updating) it sets
// window.clientResult to {title, styleLayers}: the layer's title and its style's layer count.
import esriConfig from '@arcgis/core/config.js';
import Map from '@arcgis/core/Map.js';
import MapView from '@arcgis/core/views/MapView.js';
import VectorTileLayer from '@arcgis/core/layers/VectorTileLayer.js';
import * as reactiveUtils from '@arcgis/core/core/reactiveUtils.js';

// The SDK loads its workers, fonts and translations from assetsPath: the package's own assets/
// folder, served by the test.
esriConfig.assetsPath = new URL('/node_modules/@arcgis/core/assets', location.href).href;

const q = new URLSearchParams(location.search);
const layer = new VectorTileLayer({url: q.get('url')});
const view = new MapView({container: 'map', map: new Map({layers: [layer]}), center: [0, 0], zoom: 0, constraints: {snapToZoom: false}});

(async () => {
  await view.when();
  await view.whenLayerView(layer);
  await reactiveUtils.whenOnce(() => !view.updating);
  window.clientResult = {title: layer.title, styleLayers: layer.currentStyleInfo.style.layers.length};
})().catch((e) => {
  window.clientResult = {error: String(e)};
});
