// driver.js runs web map clients (OpenLayers, MapLibre GL JS, …) against a farm in one headless
// Chromium and prints what each saw as JSON (see e2e/clients_test.go):
//
//   node driver.js <chromium> <bundle cache dir> <out dir> <jobs JSON>
//
// Each job is {name, bundle, params, timeoutMs}: the page <bundle>.html, whose script is the entry
// <bundle>.js of this folder bundled with esbuild, opened with params as its query string. The
// page draws into #map and sets window.clientResult (an object; `error` when it failed) when it is
// done. The driver waits for that, screenshots #map into <out dir>/<name>.png and reports the
// page's console errors, the requests it made (to the farm: path and status) and every request
// to an origin other than the page's and the farm's (refused).
//
// Bundles are built once and kept in the cache dir, each in a folder named by a hash of the
// entry's source and the versions of esbuild and of every package the entry imports, so a warm
// run bundles nothing. Packages are found in NODE_PATH (one or more folders). One browser serves
// every job, each in a context of its own.
const {chromium} = require('playwright-core');
const crypto = require('crypto');
const fs = require('fs');
const http = require('http');
const path = require('path');

const [executablePath, cacheDir, outDir, jobsJSON] = process.argv.slice(2);
const jobs = JSON.parse(jobsJSON);
const here = __dirname;
const nodePaths = (process.env.NODE_PATH || '').split(path.delimiter).filter(Boolean);

// The entries: the npm packages each imports (their versions key the bundle); esm: bundled as ES
// modules split into chunks (the page loads it as a module), else as one script; assets: a
// package whose assets/ folder is served below the bundle's, as <entry>/assets/.
const entries = {
  ol: {imports: ['ol']},
  maplibre: {imports: ['maplibre-gl']},
  arcgis: {imports: ['@arcgis/core'], esm: true, assets: '@arcgis/core'},
};

function packageDir(name) {
  return path.dirname(require.resolve(name + '/package.json', {paths: nodePaths}));
}

function packageVersion(name) {
  return JSON.parse(fs.readFileSync(path.join(packageDir(name), 'package.json'), 'utf8')).version;
}

// bundle returns the folder of the bundle of entry (<entry>.js and its chunks), building it when
// the cache has none.
async function bundle(entry, report) {
  const e = entries[entry];
  if (!e) throw new Error('unknown bundle ' + entry);
  const src = fs.readFileSync(path.join(here, entry + '.js'));
  const h = crypto.createHash('sha256');
  h.update(src);
  h.update(JSON.stringify(e));
  for (const p of ['esbuild', ...e.imports]) h.update(`\n${p}@${packageVersion(p)}`);
  const out = path.join(cacheDir, `${entry}-${h.digest('hex').slice(0, 16)}`);
  const size = () => fs.readdirSync(out).reduce((n, f) => n + fs.statSync(path.join(out, f)).size, 0);
  if (fs.existsSync(path.join(out, entry + '.js'))) {
    report[entry] = {cached: true, ms: 0, bytes: size()};
    return out;
  }
  const t0 = Date.now();
  const esbuild = require('esbuild');
  fs.mkdirSync(cacheDir, {recursive: true});
  const tmp = `${out}.${process.pid}.tmp`;
  fs.rmSync(tmp, {recursive: true, force: true});
  await esbuild.build({
    entryPoints: [path.join(here, entry + '.js')],
    bundle: true,
    format: e.esm ? 'esm' : 'iife',
    splitting: !!e.esm,
    minify: true,
    nodePaths,
    outdir: tmp,
    logLevel: 'error',
    loader: {'.css': 'empty'},
  });
  fs.rmSync(out, {recursive: true, force: true});
  fs.renameSync(tmp, out);
  // Bundles of the entry's earlier versions are of no more use.
  for (const f of fs.readdirSync(cacheDir)) {
    if (f.startsWith(entry + '-') && path.join(cacheDir, f) !== out && !f.endsWith('.tmp')) {
      fs.rmSync(path.join(cacheDir, f), {recursive: true, force: true});
    }
  }
  report[entry] = {cached: false, ms: Date.now() - t0, bytes: size()};
  return out;
}

const types = {'.js': 'text/javascript', '.json': 'application/json', '.wasm': 'application/wasm', '.css': 'text/css',
  '.png': 'image/png', '.svg': 'image/svg+xml', '.woff2': 'font/woff2', '.woff': 'font/woff'};

// serveFile answers the file rel below root, 404 when there is none (or rel leaves root).
function serveFile(res, root, rel) {
  const f = path.join(root, path.normalize('/' + rel));
  if (!fs.existsSync(f) || !fs.statSync(f).isFile()) {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(200, {'Content-Type': types[path.extname(f)] || 'application/octet-stream'});
  fs.createReadStream(f).pipe(res);
}

// serve answers, on a loopback port, GET /<entry>.html (the page), /<entry>/<file> (the bundle's
// files) and /<entry>/assets/<file> (the entry's package assets).
function serve(dirs) {
  const server = http.createServer((req, res) => {
    const p = decodeURIComponent(new URL(req.url, 'http://x').pathname).slice(1);
    const page = /^([a-z]+)\.html$/.exec(p);
    if (page && dirs[page[1]]) {
      const e = entries[page[1]];
      res.writeHead(200, {'Content-Type': 'text/html; charset=utf-8'});
      res.end(`<!doctype html><html><head><meta charset="utf-8"><title>${page[1]}</title>` +
        `<style>html,body{margin:0;background:#fff}#map{width:512px;height:512px}</style></head>` +
        `<body><div id="map"></div><script ${e.esm ? 'type="module" ' : ''}src="${page[1]}/${page[1]}.js"></script></body></html>`);
      return;
    }
    const slash = p.indexOf('/');
    const entry = p.slice(0, slash);
    if (slash < 0 || !dirs[entry]) {
      res.writeHead(404).end();
      return;
    }
    const rel = p.slice(slash + 1);
    if (entries[entry].assets && rel.startsWith('assets/')) {
      serveFile(res, packageDir(entries[entry].assets), rel);
      return;
    }
    serveFile(res, dirs[entry], rel);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

async function runJob(browser, pageOrigin, job) {
  const t0 = Date.now();
  const run = {consoleErrors: [], foreignRequests: [], requests: [], result: null, ms: 0};
  const farm = new URL(job.params.farm).origin;
  const context = await browser.newContext({viewport: {width: 600, height: 600}});
  try {
    const page = await context.newPage();
    page.on('console', (m) => {
      if (m.type() === 'error') run.consoleErrors.push(m.text());
    });
    page.on('pageerror', (e) => run.consoleErrors.push('page error: ' + e.message));
    await page.route('**/*', (route) => {
      const u = route.request().url();
      if (u.startsWith(pageOrigin + '/') || u.startsWith(farm + '/') || u.startsWith('data:') || u.startsWith('blob:')) {
        return route.continue();
      }
      run.foreignRequests.push(u);
      return route.abort();
    });
    page.on('response', (r) => {
      if (r.url().startsWith(farm + '/')) run.requests.push({path: r.url().slice(farm.length), status: r.status()});
    });
    page.on('requestfailed', (r) => {
      if (r.url().startsWith(farm + '/')) run.requests.push({path: r.url().slice(farm.length), status: 0, failure: r.failure()?.errorText || ''});
    });
    const q = new URLSearchParams(job.params).toString();
    await page.goto(`${pageOrigin}/${job.bundle}.html?${q}`, {waitUntil: 'load'});
    await page.waitForFunction(() => window.clientResult !== undefined, null, {timeout: job.timeoutMs || 60000});
    run.result = await page.evaluate(() => window.clientResult);
    await page.locator('#map').screenshot({path: path.join(outDir, job.name + '.png')});
  } catch (e) {
    run.consoleErrors.push('driver: ' + e.message);
  } finally {
    await context.close();
  }
  run.ms = Date.now() - t0;
  return run;
}

(async () => {
  const out = {bundles: {}, runs: {}, launchMs: 0};
  const dirs = {};
  for (const b of new Set(jobs.map((j) => j.bundle))) dirs[b] = await bundle(b, out.bundles);
  const server = await serve(dirs);
  const pageOrigin = `http://127.0.0.1:${server.address().port}`;
  const t0 = Date.now();
  const browser = await chromium.launch({
    executablePath,
    headless: true,
    // WebGL (MapLibre) draws with SwiftShader, Chromium's CPU renderer.
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--use-angle=swiftshader', '--enable-unsafe-swiftshader'],
  });
  out.launchMs = Date.now() - t0;
  try {
    // One page at a time: three at once took as long on two busy cores.
    for (const job of jobs) out.runs[job.name] = await runJob(browser, pageOrigin, job);
  } finally {
    await browser.close();
    server.close();
  }
  process.stdout.write(JSON.stringify(out));
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
