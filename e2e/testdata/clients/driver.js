// driver.js runs web map clients (OpenLayers, MapLibre GL JS, …) against a farm in one headless
// Chromium and prints what each saw as JSON (see e2e/clients_test.go):
//
//   node driver.js <chromium> <bundle cache dir> <out dir> <jobs JSON>
//
// Each job is {name, bundle, params}: the page <bundle>.html, whose script is the entry
// <bundle>.js of this folder bundled with esbuild, opened with params as its query string. The
// page draws into #map and sets window.clientResult (an object; `error` when it failed) when it is
// done. The driver waits for that, screenshots #map into <out dir>/<name>.png and reports the
// page's console errors, the requests it made (to the farm: path and status) and every request
// to an origin other than the page's and the farm's (refused).
//
// Bundles are built once and kept in the cache dir, named by a hash of the entry's source and the
// versions of esbuild and of every package the entry imports, so a warm run bundles nothing. One
// browser serves every job, each in a context of its own.
const {chromium} = require('playwright-core');
const crypto = require('crypto');
const fs = require('fs');
const http = require('http');
const path = require('path');

const [executablePath, cacheDir, outDir, jobsJSON] = process.argv.slice(2);
const jobs = JSON.parse(jobsJSON);
const here = __dirname;
const nodePaths = (process.env.NODE_PATH || '').split(path.delimiter).filter(Boolean);

// The npm packages each entry imports (their versions key the bundle).
const imports = {
  ol: ['ol'],
  maplibre: ['maplibre-gl'],
};

function packageVersion(name) {
  const file = require.resolve(name + '/package.json', {paths: nodePaths});
  return JSON.parse(fs.readFileSync(file, 'utf8')).version;
}

// bundle returns the path of the bundle of entry, building it when the cache has none.
async function bundle(entry, report) {
  const src = fs.readFileSync(path.join(here, entry + '.js'));
  const h = crypto.createHash('sha256');
  h.update(src);
  for (const p of ['esbuild', ...(imports[entry] || [])]) h.update(`\n${p}@${packageVersion(p)}`);
  const out = path.join(cacheDir, `${entry}-${h.digest('hex').slice(0, 16)}.js`);
  if (fs.existsSync(out)) {
    report[entry] = {cached: true, ms: 0, bytes: fs.statSync(out).size};
    return out;
  }
  const t0 = Date.now();
  const esbuild = require('esbuild');
  fs.mkdirSync(cacheDir, {recursive: true});
  const tmp = `${out}.${process.pid}.tmp`;
  await esbuild.build({
    entryPoints: [path.join(here, entry + '.js')],
    bundle: true,
    format: 'iife',
    minify: true,
    nodePaths,
    outfile: tmp,
    logLevel: 'error',
    loader: {'.css': 'empty'},
  });
  fs.renameSync(tmp, out);
  report[entry] = {cached: false, ms: Date.now() - t0, bytes: fs.statSync(out).size};
  return out;
}

// serve answers GET /<bundle>.html (the page) and /<bundle>.js (its script) on a loopback port.
function serve(files) {
  const server = http.createServer((req, res) => {
    const name = new URL(req.url, 'http://x').pathname.slice(1);
    const m = /^([a-z]+)\.(html|js)$/.exec(name);
    if (!m || !files[m[1]]) {
      res.writeHead(404).end();
      return;
    }
    if (m[2] === 'html') {
      res.writeHead(200, {'Content-Type': 'text/html; charset=utf-8'});
      res.end(`<!doctype html><html><head><meta charset="utf-8"><title>${m[1]}</title>` +
        `<style>html,body{margin:0;background:#fff}#map{width:512px;height:512px}</style></head>` +
        `<body><div id="map"></div><script src="${m[1]}.js"></script></body></html>`);
      return;
    }
    res.writeHead(200, {'Content-Type': 'text/javascript'});
    fs.createReadStream(files[m[1]]).pipe(res);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

async function runJob(browser, pageOrigin, job) {
  const run = {consoleErrors: [], foreignRequests: [], requests: [], result: null};
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
  return run;
}

(async () => {
  const out = {bundles: {}, runs: {}};
  const files = {};
  for (const b of new Set(jobs.map((j) => j.bundle))) files[b] = await bundle(b, out.bundles);
  const server = await serve(files);
  const pageOrigin = `http://127.0.0.1:${server.address().port}`;
  const browser = await chromium.launch({
    executablePath,
    headless: true,
    // WebGL (MapLibre) draws with SwiftShader, Chromium's CPU renderer.
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--use-angle=swiftshader', '--enable-unsafe-swiftshader'],
  });
  try {
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
