// driver.js runs web map clients (OpenLayers, MapLibre GL JS, …) against a farm in one headless
// Chromium and prints what each saw as JSON (see e2e/clients_test.go):
//
//   node driver.js <chromium> <bundle cache dir> <out dir> <jobs JSON>
//
// Each job is {name, bundle, params, timeoutMs}: the page <bundle>.html, whose script is the entry
// <bundle>.js of this folder bundled with esbuild, opened with params as its query string. The
// page draws into #map and sets window.clientResult (an object; `error` when it failed) when it is
// done. The driver waits for that, screenshots #map into <out dir>/<name>.png and reports the
// page's console errors, the requests it made (to the farm: path and status; to the page's own
// server: how many, and those that failed) and every request to an origin other than the page's
// and the farm's (refused), and the CPU time the browser took.
//
// Bundles are built once and kept in the cache dir, each in a folder named by a hash of the
// entry's source and the versions of esbuild and of every package the entry imports, so a warm
// run bundles nothing. An entry of ES modules (the ArcGIS Maps SDK) is not bundled at all: the
// page loads the entry as it is and the packages' own modules from node_modules, through an
// import map (below). Packages are found in NODE_PATH (one or more folders). One browser serves
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

// The entries: the npm packages each imports (their versions key the bundle), bundled as one
// script; unbundled: the entry is an ES module loaded as it is, its imports resolved by the
// page's import map to the packages' files (see serve).
const entries = {
  ol: {imports: ['ol']},
  maplibre: {imports: ['maplibre-gl']},
  arcgis: {imports: ['@arcgis/core'], unbundled: true},
};

// packageDir is the folder of package name in the first NODE_PATH folder that has it.
function packageDir(name) {
  for (const d of nodePaths) {
    if (fs.existsSync(path.join(d, name, 'package.json'))) return path.join(d, name);
  }
  throw new Error(`package ${name} is not installed in ${nodePaths.join(path.delimiter)}`);
}

function packageVersion(name) {
  return JSON.parse(fs.readFileSync(path.join(packageDir(name), 'package.json'), 'utf8')).version;
}

// bundle returns the folder of the bundle of entry (<entry>.js and its chunks), building it when
// the cache has none.
async function bundle(entry, report) {
  const e = entries[entry];
  if (!e) throw new Error('unknown bundle ' + entry);
  if (e.unbundled) {
    report[entry] = {cached: true, ms: 0, bytes: fs.statSync(path.join(here, entry + '.js')).size};
    return here;
  }
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
    format: 'iife',
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

const types = {'.js': 'text/javascript', '.mjs': 'text/javascript', '.json': 'application/json', '.wasm': 'application/wasm', '.css': 'text/css',
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

// exportTarget resolves a package.json "exports" value for a browser's ES module import.
function exportTarget(v) {
  if (typeof v === 'string') return v;
  if (Array.isArray(v)) return v.map(exportTarget).find(Boolean);
  if (v && typeof v === 'object') {
    for (const [k, sub] of Object.entries(v)) {
      if (['browser', 'module', 'import', 'default'].includes(k)) {
        const t = exportTarget(sub);
        if (t) return t;
      }
    }
  }
  return null;
}

// nodeModulesFile is the file rel (pkg/path) in the first NODE_PATH folder that has it.
function nodeModulesFile(rel) {
  for (const d of nodePaths) {
    const f = path.join(d, path.normalize('/' + rel));
    if (fs.existsSync(f) && fs.statSync(f).isFile()) return f;
  }
  return null;
}

// importMap maps the bare imports of every package of the NODE_PATH folders to the files they
// name below /node_modules/, as a bundler resolves them (exports with the conditions browser,
// module, import, default; else module, main): each file has one URL, so a module imported
// by its package's name and by a relative path of its package is one module. An exports pattern
// whose target has text after its * (./components/* to ./dist/components/*/index.js) is listed
// file by file from the folder the * stands in.
function importMap() {
  const imports = {};
  const add = (k, v) => {
    if (!(k in imports)) imports[k] = v;
  };
  for (const d of nodePaths) {
    for (const f of fs.readdirSync(d)) {
      if (f.startsWith('.')) continue;
      const names = f.startsWith('@') ? fs.readdirSync(path.join(d, f)).map((g) => f + '/' + g) : [f];
      for (const name of names) {
        let pj;
        try {
          pj = JSON.parse(fs.readFileSync(path.join(d, name, 'package.json'), 'utf8'));
        } catch {
          continue;
        }
        const base = `/node_modules/${name}/`;
        if (!pj.exports) {
          add(name, base + (pj.module || pj.main || 'index.js').replace(/^\.\//, ''));
          add(name + '/', base);
          continue;
        }
        const ex = typeof pj.exports === 'string' || Array.isArray(pj.exports) || !Object.keys(pj.exports).some((k) => k.startsWith('.')) ?
          {'.': pj.exports} : pj.exports;
        for (const [k, v] of Object.entries(ex)) {
          const t = exportTarget(v);
          if (!t) continue;
          const star = k.indexOf('*');
          if (star < 0) {
            add(k === '.' ? name : name + k.slice(1), base + path.posix.normalize(t));
            continue;
          }
          const [kp, ks] = [k.slice(1, star), k.slice(star + 1)];
          const ts = t.indexOf('*');
          const [tp, tsuf] = [t.slice(0, ts), t.slice(ts + 1)];
          if (ks === '' && tsuf === '' && kp.endsWith('/') && tp.endsWith('/')) {
            add(name + kp, base + path.posix.normalize(tp));
            continue;
          }
          // List what the * can stand for: the names in the target's folder.
          const folder = path.join(d, name, path.dirname(tp + 'x'));
          let list = [];
          try {
            list = fs.readdirSync(folder);
          } catch {}
          const lead = path.basename(tp + 'x').slice(0, -1);
          for (const e of list) {
            if (!e.startsWith(lead)) continue;
            let stem = e.slice(lead.length);
            if (tsuf && !tsuf.startsWith('/')) {
              if (!stem.endsWith(tsuf)) continue;
              stem = stem.slice(0, -tsuf.length);
            }
            const file = path.posix.normalize(tp + stem + tsuf);
            if (fs.existsSync(path.join(d, name, file))) add(name + kp + stem + ks, base + file);
          }
        }
      }
    }
  }
  return {imports};
}

// serve answers, on a loopback port, GET /<entry>.html (the page) and /<entry>/<file> (the
// bundle's files), and for the pages of unbundled entries /node_modules/<pkg>/<file> (the
// packages' files, their assets among them).
function serve(dirs) {
  let imports = null;
  const map = () => (imports ||= importMap());
  const server = http.createServer((req, res) => {
    const p = decodeURIComponent(new URL(req.url, 'http://x').pathname).slice(1);
    const page = /^([a-z]+)\.html$/.exec(p);
    if (page && dirs[page[1]]) {
      const e = entries[page[1]];
      // process.env.NODE_ENV, which bundlers replace, read by some of the packages' modules.
      const script = e.unbundled ?
        `<script>window.process = {env: {NODE_ENV: 'production'}};</script>` +
        `<script type="importmap">${JSON.stringify(map())}</script><script type="module" src="${page[1]}/${page[1]}.js"></script>` :
        `<script src="${page[1]}/${page[1]}.js"></script>`;
      res.writeHead(200, {'Content-Type': 'text/html; charset=utf-8'});
      res.end(`<!doctype html><html><head><meta charset="utf-8"><title>${page[1]}</title>` +
        `<style>html,body{margin:0;background:#fff}#map{width:512px;height:512px}</style></head>` +
        `<body><div id="map"></div>${script}</body></html>`);
      return;
    }
    if (p.startsWith('node_modules/')) {
      const f = nodeModulesFile(p.slice(13));
      if (!f) {
        res.writeHead(404).end();
        return;
      }
      if (f.endsWith('.css') && req.headers['sec-fetch-dest'] === 'script') {
        // A module importing a style sheet (import "./x.css"), as bundlers allow: a module that
        // links the sheet, as they do.
        res.writeHead(200, {'Content-Type': 'text/javascript'});
        res.end(`const l = document.createElement('link'); l.rel = 'stylesheet'; l.href = ${JSON.stringify('/' + p)}; document.head.append(l);`);
        return;
      }
      serveFile(res, path.dirname(f), path.basename(f));
      return;
    }
    const slash = p.indexOf('/');
    const entry = p.slice(0, slash);
    if (slash < 0 || !dirs[entry]) {
      res.writeHead(404).end();
      return;
    }
    serveFile(res, dirs[entry], p.slice(slash + 1));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

async function runJob(browser, pageOrigin, job) {
  const t0 = Date.now();
  const run = {consoleErrors: [], foreignRequests: [], requests: [], pageFiles: 0, pageFailures: [], result: null, ms: 0};
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
      else if (r.url().startsWith(pageOrigin + '/')) {
        run.pageFiles++;
        if (r.status() >= 400) run.pageFailures.push(r.status() + ' ' + r.url().slice(pageOrigin.length));
      }
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

// ownCPUms is the driver's own CPU time (ms): its process's, without its children's.
function ownCPUms() {
  const u = process.cpuUsage();
  return Math.round((u.user + u.system) / 1000);
}

// treeCPUms is the CPU time (user and system, ms) of process pid and of its descendants alive
// now with what they reaped: the browser's, measured before closing it, since Chromium's
// processes are not all reaped by then and a time of the driver's process would miss them.
function treeCPUms(pid) {
  const children = new Map();
  const cpu = new Map();
  for (const f of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(f)) continue;
    let st;
    try {
      st = fs.readFileSync(`/proc/${f}/stat`, 'utf8');
    } catch {
      continue;
    }
    const fields = st.slice(st.lastIndexOf(')') + 2).split(' ');
    const ppid = Number(fields[1]);
    // utime, stime, cutime, cstime, in clock ticks (100 a second on Linux).
    cpu.set(Number(f), (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) * 10);
    if (!children.has(ppid)) children.set(ppid, []);
    children.get(ppid).push(Number(f));
  }
  let ms = 0;
  const todo = [pid];
  while (todo.length) {
    const p = todo.pop();
    ms += cpu.get(p) || 0;
    todo.push(...(children.get(p) || []));
  }
  return ms;
}

(async () => {
  const out = {bundles: {}, runs: {}, launchMs: 0, chromiumCPUms: 0};
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
    out.chromiumCPUms = treeCPUms(process.pid) - ownCPUms();
  } finally {
    await browser.close();
    server.close();
  }
  process.stdout.write(JSON.stringify(out));
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
