// Drives the host page in headless Chromium (puppeteer-core, with the browser given: nothing is
// downloaded) for the browser test of examples/apps:
//
//   node drive.mjs CHROMIUM HOST_PAGE_URL SCREENSHOT.png
//
// It waits for the view to render inside its two iframes, reads the tally, clicks the view's +1
// button (the view then calls the app-only tool through the host), waits for the new count and
// writes a screenshot. It prints one JSON object with what it read from both pages; the Go test
// asserts on it. Exits 1, with the reason on stderr, when a step fails or times out.
import process from 'node:process';
import puppeteer from 'puppeteer-core';

const [chromium, url, screenshot] = process.argv.slice(2);
if (!chromium || !url || !screenshot) {
  console.error('usage: node drive.mjs CHROMIUM HOST_PAGE_URL SCREENSHOT.png');
  process.exit(2);
}
const args = ['--headless=new', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run'];
if (process.getuid?.() === 0) args.push('--no-sandbox'); // Chromium refuses its own sandbox as root

const browser = await puppeteer.launch({ executablePath: chromium, headless: true, args, timeout: 30000 });
let failed = false;
try {
  const page = await browser.newPage();
  page.setDefaultTimeout(20000);
  page.on('console', (m) => console.error(`page ${m.type()}: ${m.text()}`));
  page.on('pageerror', (e) => console.error(`page error: ${e.message}`));
  await page.setViewport({ width: 800, height: 640 });
  await page.goto(url, { waitUntil: 'load' });
  await page.waitForFunction(() => document.body.dataset.state !== 'loading');
  const state = await page.evaluate(() => document.body.dataset.state);
  if (state !== 'rendered') throw new Error(`host page ${state}: ${await page.$eval('#error', (e) => e.textContent)}`);

  // The view: the innermost frame, a srcdoc document under the sandbox proxy.
  let view;
  for (let i = 0; i < 200 && !view; i++) {
    view = page.frames().find((f) => f.url() === 'about:srcdoc');
    if (!view) await new Promise((r) => setTimeout(r, 50));
  }
  if (!view) throw new Error(`no view frame among ${page.frames().map((f) => f.url()).join(', ')}`);
  await view.waitForFunction(() => document.body.dataset.count !== undefined);
  const before = await view.evaluate(() => ({
    name: document.getElementById('name').textContent,
    count: document.getElementById('count').textContent,
    origin: String(window.origin),
  }));
  await view.click('#plus');
  await view.waitForFunction((was) => document.body.dataset.count !== was, {}, before.count);
  const after = await view.evaluate(() => ({
    count: document.getElementById('count').textContent,
    status: document.getElementById('status').textContent,
  }));
  const read = (sel) => page.$eval(sel, (e) => e.textContent);
  const host = {
    origin: await page.evaluate(() => location.origin),
    protocol: await read('#protocol'),
    serverExtension: await read('#server-ext'),
    modelTools: await read('#model-tools'),
    toolText: await read('#tool-text'),
    appCalls: await read('#app-calls'),
    frames: page.frames().map((f) => f.url()),
  };
  await page.screenshot({ path: screenshot, fullPage: true });
  console.log(JSON.stringify({ host, before, after }));
} catch (e) {
  failed = true;
  console.error(`drive.mjs: ${e?.stack ?? e}`);
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);
