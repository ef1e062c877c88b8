// viewer_playwright.js drives the map viewer in headless Chromium with playwright-core and
// prints what it saw as JSON (see e2e/viewer_test.go):
//
//   node viewer_playwright.js <viewer URL> <chromium> <out dir> <layer id to switch on> <lon> <lat> [vector]
//
// It loads the page, waits for the map to finish drawing, screenshots the map (before.png),
// ticks the layer's check box, waits for the next drawing and screenshots again (after.png),
// clicks the map at lon/lat and reads the identify popup. With "vector", it then switches the
// viewer to vector mode, waits for the drawing, screenshots it (vector.png, and reports where
// lon/lat and vectorSea's lon/lat fall in it), closes the popup and clicks lon/lat again for
// identify's. Every request to another origin is refused and reported.
const {chromium} = require('playwright-core');
const path = require('path');

const [url, executablePath, outDir, layerID, lon, lat, vector] = process.argv.slice(2);
// A point of the sea in the vector screenshot: the South Pacific.
const vectorSea = [-120, -40];

async function renders(page) {
  return Number(await page.evaluate(() => document.body.dataset.renders || '0'));
}

// waitDrawn waits until the map has finished drawing more than n times.
async function waitDrawn(page, n) {
  await page.waitForFunction((n) => Number(document.body.dataset.renders || '0') > n, n, {timeout: 60000});
}

(async () => {
  const out = {consoleErrors: [], foreignRequests: [], requests: [], popup: '', mode: '', status: ''};
  const origin = new URL(url).origin;
  const browser = await chromium.launch({executablePath, headless: true, args: ['--no-sandbox', '--disable-gpu']});
  try {
    const page = await browser.newPage({viewport: {width: 1000, height: 700}});
    page.on('console', (m) => {
      if (m.type() === 'error') out.consoleErrors.push(m.text());
    });
    page.on('pageerror', (e) => out.consoleErrors.push('page error: ' + e.message));
    await page.route('**/*', (route) => {
      const u = route.request().url();
      if (!u.startsWith(origin + '/') && !u.startsWith('data:') && !u.startsWith('blob:')) {
        out.foreignRequests.push(u);
        return route.abort();
      }
      out.requests.push(u.slice(origin.length));
      return route.continue();
    });
    await page.goto(url, {waitUntil: 'load'});
    await page.waitForFunction(() => document.body.dataset.ready === 'true' || document.getElementById('status').textContent.startsWith('error'), null, {timeout: 60000});
    out.status = await page.textContent('#status');
    out.mode = await page.evaluate(() => document.body.dataset.mode || '');
    await waitDrawn(page, 0);
    const map = page.locator('#map');
    await map.screenshot({path: path.join(outDir, 'before.png')});

    let n = await renders(page);
    await page.check('#layer-' + layerID);
    await waitDrawn(page, n);
    await map.screenshot({path: path.join(outDir, 'after.png')});

    // lon/lat in Web Mercator, then to the pixel of the extent the map shows.
    const box = await map.boundingBox();
    const pixel = async (lon, lat) => {
      const [xmin, ymin, xmax, ymax] = (await page.evaluate(() => document.body.dataset.extent)).split(',').map(Number);
      const R = 6378137;
      const x = (R * Number(lon) * Math.PI) / 180;
      const y = R * Math.log(Math.tan(Math.PI / 4 + (Number(lat) * Math.PI) / 360));
      return [((x - xmin) / (xmax - xmin)) * box.width, ((ymax - y) / (ymax - ymin)) * box.height];
    };
    const identify = async () => {
      const [px, py] = await pixel(lon, lat);
      await page.mouse.click(box.x + px, box.y + py);
      await page.waitForFunction(() => document.getElementById('popup-content').textContent.trim() !== '', null, {timeout: 30000});
      return [await page.textContent('#popup-content'), await page.isVisible('#popup')];
    };
    [out.popup, out.popupVisible] = await identify();
    // Pending fetches or images failing after the click would show up as console errors.
    await page.waitForTimeout(300);

    if (vector === 'vector') {
      await page.click('#popup-closer');
      await page.evaluate(() => document.getElementById('popup-content').replaceChildren());
      n = await renders(page);
      await page.check('#vector-mode');
      await page.waitForFunction(() => document.body.dataset.mode === 'vector', null, {timeout: 60000});
      await waitDrawn(page, n);
      out.vectorMode = await page.evaluate(() => document.body.dataset.mode);
      out.vectorStatus = await page.textContent('#status');
      await map.screenshot({path: path.join(outDir, 'vector.png')});
      out.vectorPoint = (await pixel(lon, lat)).map(Math.round);
      out.vectorSea = (await pixel(...vectorSea)).map(Math.round);
      [out.vectorPopup, out.vectorPopupVisible] = await identify();
      await page.waitForTimeout(300);
    }
  } finally {
    await browser.close();
  }
  process.stdout.write(JSON.stringify(out));
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
