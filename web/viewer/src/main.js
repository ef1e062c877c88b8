// The mapfarm map viewer: one ArcGIS REST map service in OpenLayers.
//
// The page (internal/viewer's viewer.html) names the service's REST URL in
// <body data-service-url>. From the service's JSON (f=json) it builds the map:
// the cache's tiles (tile/{level}/{row}/{col}) where the service has a fused
// cache and every default layer is on, the REST export otherwise
// (layers=show:…); a check box per layer; a click runs identify and shows the
// attributes it answers in a popup. A switch draws the service's VectorTileServer instead: its
// Mapbox Vector Tiles styled by its resources/styles/root.json (ol-mapbox-style), where the map
// is in Web Mercator (the VectorTileServer's tiles are).
import 'ol/ol.css';
import './viewer.css';
import Map from 'ol/Map.js';
import View from 'ol/View.js';
import Overlay from 'ol/Overlay.js';
import TileLayer from 'ol/layer/Tile.js';
import ImageLayer from 'ol/layer/Image.js';
import XYZ from 'ol/source/XYZ.js';
import ImageArcGISRest from 'ol/source/ImageArcGISRest.js';
import TileGrid from 'ol/tilegrid/TileGrid.js';
import Projection from 'ol/proj/Projection.js';
import {get as getProjection} from 'ol/proj.js';
import VectorTileLayer from 'ol/layer/VectorTile.js';
import VectorTileSource from 'ol/source/VectorTile.js';
import MVT from 'ol/format/MVT.js';
import {createXYZ} from 'ol/tilegrid.js';
import {applyStyle, applyBackground} from 'ol-mapbox-style';

const serviceURL = document.body.dataset.serviceUrl;
// The token the page was opened with (…/viewer?token=…), sent on every request of the viewer
// when the farm needs tokens.
const token = document.body.dataset.token || '';

function withToken(url) {
  return token ? url + (url.includes('?') ? '&' : '?') + 'token=' + encodeURIComponent(token) : url;
}

function projectionOf(sr, extent) {
  const wkid = sr && (sr.latestWkid || sr.wkid);
  if (wkid === 3857 || wkid === 102100 || wkid === 102113 || wkid === 900913) {
    return getProjection('EPSG:3857');
  }
  if (wkid === 4326) {
    return getProjection('EPSG:4326');
  }
  // Another coordinate system: a plain projection over the service's extent;
  // the REST endpoints reproject nothing the viewer asks for.
  return new Projection({code: 'EPSG:' + wkid, units: 'm', extent});
}

function extentOf(e) {
  return [e.xmin, e.ymin, e.xmax, e.ymax];
}

function el(tag, attrs, text) {
  const n = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    n.setAttribute(k, v);
  }
  if (text !== undefined) {
    n.textContent = text;
  }
  return n;
}

async function start() {
  const status = document.getElementById('status');
  const res = await fetch(withToken(serviceURL + '?f=json'));
  const info = await res.json();
  if (info.error) {
    throw new Error(info.error.message);
  }
  document.getElementById('title').textContent = info.mapName + ' — ' + serviceURL.split('/').slice(-2, -1)[0];
  const full = extentOf(info.fullExtent || info.initialExtent);
  const projection = projectionOf(info.spatialReference, full);
  const wkid = info.spatialReference.latestWkid || info.spatialReference.wkid;
  const leaves = info.layers.filter((l) => !l.subLayerIds || l.subLayerIds.length === 0);
  const visible = new Set(leaves.filter((l) => l.defaultVisibility).map((l) => l.id));
  const defaults = new Set(visible);

  const layers = [];
  let tiles = null;
  if (info.singleFusedMapCache && info.tileInfo) {
    const ti = info.tileInfo;
    const lods = ti.lods.slice().sort((a, b) => a.level - b.level);
    tiles = new TileLayer({
      source: new XYZ({
        projection,
        tileGrid: new TileGrid({
          origin: [ti.origin.x, ti.origin.y],
          resolutions: lods.map((l) => l.resolution),
          tileSize: [ti.cols, ti.rows],
          extent: full,
        }),
        tileUrlFunction: (c) => withToken(`${serviceURL}/tile/${lods[c[0]].level}/${c[2]}/${c[1]}`),
      }),
    });
    layers.push(tiles);
  }
  const dynamic = new ImageLayer({
    source: new ImageArcGISRest({
      url: serviceURL,
      ratio: 1,
      params: {FORMAT: 'PNG32', TRANSPARENT: true, LAYERS: 'show:' + [...visible].join(','), ...(token ? {token} : {})},
    }),
    visible: tiles === null,
  });
  layers.push(dynamic);

  const popup = document.getElementById('popup');
  const overlay = new Overlay({element: popup, autoPan: true});
  const map = new Map({
    target: 'map',
    layers,
    overlays: [overlay],
    view: new View({projection, extent: projection.getExtent() || full}),
  });
  map.getView().fit(extentOf(info.initialExtent || info.fullExtent), {size: map.getSize()});

  // Vector mode: the VectorTileServer of the same service (…/<svc>/VectorTileServer), drawn with
  // its own style. Its tiles hold the layers visible by default (named as in the service); a
  // switched-off layer's features are not drawn, a layer the tiles do not hold is not drawn.
  const vtsURL = serviceURL.replace(/\/MapServer$/, '/VectorTileServer');
  const names = new Map(leaves.map((l) => [l.name, l.id]));
  let vector = null;
  let vectorOn = false;
  async function vectorLayer() {
    const styleURL = new URL(vtsURL + '/resources/styles/root.json', location.href).href;
    const res = await fetch(withToken(styleURL));
    const glStyle = await res.json();
    if (glStyle.error) {
      throw new Error(glStyle.error.message);
    }
    const layer = new VectorTileLayer({
      declutter: true,
      source: new VectorTileSource({
        format: new MVT(),
        url: withToken(vtsURL + '/tile/{z}/{y}/{x}.pbf'),
        tileGrid: createXYZ({tileSize: 512, maxZoom: 14}),
      }),
      visible: false,
    });
    // The style names the farm's public URL; the page asks its own origin, with its token.
    const vtsPath = new URL(vtsURL, location.href).pathname;
    const options = {
      updateSource: false,
      styleUrl: styleURL,
      // The system's fonts: ol-mapbox-style would otherwise link web fonts from a CDN.
      webfonts: withToken(new URL(serviceURL + '/viewer/fonts.css', location.href).href),
      transformRequest: (url) => {
        const u = new URL(url, location.href);
        const at = u.pathname.indexOf('/VectorTileServer/');
        if (at < 0) {
          return undefined;
        }
        return withToken(location.origin + vtsPath + u.pathname.slice(at + '/VectorTileServer'.length) + u.search);
      },
    };
    await applyStyle(layer, glStyle, options);
    await applyBackground(layer, glStyle, options);
    const styled = layer.getStyle();
    layer.setStyle((feature, resolution) => {
      const id = names.get(feature.get('layer'));
      return id !== undefined && !visible.has(id) ? undefined : styled(feature, resolution);
    });
    return layer;
  }

  function refresh() {
    const same = visible.size === defaults.size && [...visible].every((id) => defaults.has(id));
    if (vectorOn) {
      if (tiles) {
        tiles.setVisible(false);
      }
      dynamic.setVisible(false);
      vector.setVisible(true);
      vector.changed();
      return;
    }
    if (vector) {
      vector.setVisible(false);
    }
    dynamic.setVisible(tiles === null);
    if (tiles) {
      // The cache holds the default layers fused: other choices draw with export.
      tiles.setVisible(same);
      dynamic.setVisible(!same);
    }
    // show: with no ids would draw the default layers; -1 names no layer.
    dynamic.getSource().updateParams({LAYERS: 'show:' + (visible.size ? [...visible].join(',') : '-1')});
  }

  const list = document.getElementById('layers');
  for (const l of leaves) {
    const id = 'layer-' + l.id;
    const box = el('input', {type: 'checkbox', id, 'data-layer-id': String(l.id)});
    box.checked = visible.has(l.id);
    box.addEventListener('change', () => {
      if (box.checked) {
        visible.add(l.id);
      } else {
        visible.delete(l.id);
      }
      refresh();
    });
    const li = el('li');
    li.append(box, el('label', {for: id}, l.name));
    list.append(li);
  }

  // The mode switch: raster (the cache's tiles or export) or the VectorTileServer's vector tiles.
  const mode = document.createElement('p');
  const vbox = el('input', {type: 'checkbox', id: 'vector-mode'});
  mode.append(vbox, el('label', {for: 'vector-mode'}, ' vector tiles (VectorTileServer)'));
  const rasterMode = tiles ? 'tiles' : 'export';
  if (projection.getCode() !== 'EPSG:3857') {
    // The VectorTileServer's tiles are in Web Mercator; OpenLayers does not reproject vector tiles.
    vbox.disabled = true;
    mode.title = 'vector tiles are in Web Mercator; this map is not';
  }
  vbox.addEventListener('change', async () => {
    try {
      if (vbox.checked && !vector) {
        vector = await vectorLayer();
        map.addLayer(vector);
      }
      vectorOn = vbox.checked;
      refresh();
      status.textContent = vectorOn ? 'vector tiles' : tiles ? 'cached tiles' : 'dynamic (export)';
      document.body.dataset.mode = vectorOn ? 'vector' : rasterMode;
    } catch (e) {
      vbox.checked = false;
      status.textContent = 'error: ' + e.message;
      console.error(e);
    }
  });
  list.before(mode);

  map.on('singleclick', async (evt) => {
    if (visible.size === 0) {
      return;
    }
    const size = map.getSize();
    const extent = map.getView().calculateExtent(size);
    const q = new URLSearchParams({
      f: 'json',
      geometry: evt.coordinate[0] + ',' + evt.coordinate[1],
      geometryType: 'esriGeometryPoint',
      sr: String(wkid),
      layers: 'visible:' + [...visible].join(','),
      tolerance: '3',
      mapExtent: extent.join(','),
      imageDisplay: size[0] + ',' + size[1] + ',96',
      returnGeometry: 'false',
    });
    if (token) {
      q.set('token', token);
    }
    const body = document.getElementById('popup-content');
    body.replaceChildren();
    try {
      const r = await fetch(serviceURL + '/identify?' + q);
      const data = await r.json();
      if (data.error) {
        throw new Error(data.error.message);
      }
      if (!data.results || data.results.length === 0) {
        overlay.setPosition(undefined);
        return;
      }
      for (const res of data.results.slice(0, 5)) {
        body.append(el('h3', {}, res.layerName + ': ' + res.value));
        const table = el('table');
        for (const [k, v] of Object.entries(res.attributes || {})) {
          const tr = el('tr');
          tr.append(el('th', {}, k), el('td', {}, String(v)));
          table.append(tr);
        }
        body.append(table);
      }
    } catch (e) {
      body.append(el('p', {class: 'error'}, 'identify: ' + e.message));
    }
    overlay.setPosition(evt.coordinate);
  });
  document.getElementById('popup-closer').addEventListener('click', (e) => {
    e.preventDefault();
    overlay.setPosition(undefined);
  });
  // For tests and scripts driving the page: how many times the map finished drawing, and the
  // extent it shows (pixel 0,0 is its top-left corner).
  let renders = 0;
  map.on('rendercomplete', () => {
    document.body.dataset.extent = map.getView().calculateExtent(map.getSize()).join(',');
    document.body.dataset.renders = String(++renders);
  });
  status.textContent = tiles ? 'cached tiles' : 'dynamic (export)';
  document.body.dataset.mode = tiles ? 'tiles' : 'export';
  document.body.dataset.ready = 'true';
}

start().catch((e) => {
  document.getElementById('status').textContent = 'error: ' + e.message;
  console.error(e);
});
