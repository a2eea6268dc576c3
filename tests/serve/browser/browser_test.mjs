// Real-browser test of the page that `tagflow serve` serves (serve/web/, docs/serve.md).
//
// Usage: node browser_test.mjs TAGFLOW_BINARY CONFIG_TOML OUTPUT_DIR
//
// Starts `TAGFLOW_BINARY serve CONFIG_TOML --port 0 --output OUTPUT_DIR/results.h5`, opens the
// URL it prints in headless Chromium (/usr/bin/chromium, or $CHROMIUM) and checks, as a person
// would: every measurement panel shows data and the profile a wall rate; Stop on one
// measurement freezes its capture duration while the others go on; a delay set on the page
// reaches the run and is shown back; the HDF5 download holds
// every measurement and the stopped one's capture duration (tests/serve/check_results.py);
// "Stop run" ends the server with 0 and leaves the results file. Saves OUTPUT_DIR/serve.png
// (OUTPUT_DIR/serve-failure.png when a check fails). Exits 1 with the reason on any failure.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import puppeteer from 'puppeteer-core';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const CHECK_RESULTS = path.join(HERE, '..', 'check_results.py');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const PYTHON = process.env.PYTHON || '/usr/bin/python3';
const WHOLE_TEST_S = 300; // a hung step must not hang CI

const log = (message) => console.log(`browser_test: ${message}`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

class Failure extends Error {}
function fail(message) {
  throw new Failure(message);
}

const [binary, config, outDir] = process.argv.slice(2);
if (!binary || !config || !outDir) {
  console.error('usage: node browser_test.mjs TAGFLOW_BINARY CONFIG_TOML OUTPUT_DIR');
  process.exit(2);
}

let server = null;
let serverExit = null; // resolves to {code, signal} when the server process ends
let browser = null;

// ---------------------------------------------------------------------------------------------
// The server.

function startServer(resultsPath) {
  const args = ['serve', config, '--port', '0', '--output', resultsPath];
  log(`starting ${binary} ${args.join(' ')}`);
  server = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  serverExit = new Promise((resolve) => {
    server.on('exit', (code, signal) => resolve({ code, signal }));
    server.on('error', (e) => resolve({ code: null, signal: null, error: e }));
  });
  server.stderr.pipe(process.stderr);

  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Failure('the server printed no "serving http://..." line within 30 s')), 30000);
    readline.createInterface({ input: server.stdout }).on('line', (line) => {
      console.log(`[server] ${line}`);
      const match = /serving (https?:\/\/\S+)/.exec(line);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    serverExit.then(({ code, signal, error }) => {
      clearTimeout(timer);
      reject(new Failure(error ? `cannot start the server: ${error.message}`
        : `the server exited (code ${code}, signal ${signal}) before it printed its URL`));
    });
  });
}

async function waitExit(seconds) {
  const result = await Promise.race([serverExit, sleep(seconds * 1000).then(() => null)]);
  if (!result) fail(`the server did not exit within ${seconds} s of "Stop run"`);
  return result;
}

async function killServer() {
  if (!server || server.exitCode !== null || server.signalCode !== null) return;
  server.kill('SIGTERM');
  if (!(await Promise.race([serverExit, sleep(5000).then(() => false)]))) {
    server.kill('SIGKILL');
    await serverExit;
  }
}

// ---------------------------------------------------------------------------------------------
// The page.

// Waits for fn (run in the page) to be true; on timeout fails with describe()'s text.
async function waitFor(page, seconds, what, fn, ...args) {
  try {
    await page.waitForFunction(fn, { timeout: seconds * 1000, polling: 100 }, ...args);
  } catch (e) {
    if (e.name !== 'TimeoutError') throw e;
    fail(`timed out after ${seconds} s waiting until ${what}`);
  }
}

function panelState(page) {
  return page.$$eval('section.measurement', (sections) => sections.map((s) => ({
    name: s.dataset.name,
    kind: s.dataset.kind,
    hasData: s.dataset.hasData,
    updates: Number(s.dataset.updates),
    capturePs: s.dataset.capturePs,
    running: s.dataset.running,
    badge: s.querySelector('.badge')?.textContent,
  })));
}

function panelSelector(name) {
  return `section.measurement[data-name=${JSON.stringify(name)}]`;
}

function configuredCount() {
  const text = fs.readFileSync(config, 'utf8');
  return text.split('\n').filter((line) => /^\s*\[\[\s*measurement\s*\]\]/.test(line)).length;
}

async function run() {
  fs.mkdirSync(outDir, { recursive: true });
  const resultsPath = path.resolve(outDir, 'results.h5');
  const downloadDir = path.resolve(outDir, 'download');
  for (const stale of [resultsPath, downloadDir, path.join(outDir, 'serve.png'),
    path.join(outDir, 'serve-failure.png')]) {
    fs.rmSync(stale, { recursive: true, force: true });
  }
  fs.mkdirSync(downloadDir);

  const url = await startServer(resultsPath);
  log(`server at ${url}`);

  browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
  const page = await browser.newPage();
  await page.setViewport({ width: 1400, height: 1000 });
  const pageErrors = [];
  page.on('pageerror', (e) => pageErrors.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') pageErrors.push(`console error: ${m.text()}`);
  });
  page.on('requestfailed', (r) => pageErrors.push(`request failed: ${r.url()} ${r.failure()?.errorText}`));
  page.on('response', (r) => {
    if (r.status() >= 400) pageErrors.push(`HTTP ${r.status()} for ${r.url()}`);
  });
  const checkPageErrors = (when) => {
    if (pageErrors.length) fail(`the page reported errors ${when}:\n  ${pageErrors.join('\n  ')}`);
  };

  try {
    return await testPage(page, url, downloadDir, resultsPath, checkPageErrors);
  } catch (e) {
    await page.screenshot({ path: path.join(outDir, 'serve-failure.png'), fullPage: true })
      .catch(() => {});
    throw e;
  }
}

async function testPage(page, url, downloadDir, resultsPath, checkPageErrors) {
  // 2. Every panel shows data, the profile a wall rate.
  await page.goto(url, { waitUntil: 'load', timeout: 30000 });
  const expected = configuredCount();
  try {
    await page.waitForFunction((n) => {
      const sections = [...document.querySelectorAll('section.measurement')];
      return sections.length === n && sections.every((s) => s.dataset.hasData === 'true') &&
        Number(document.getElementById('profile').dataset.wallMtagsPerS) > 0;
    }, { timeout: 60000, polling: 200 }, expected);
  } catch (e) {
    if (e.name !== 'TimeoutError') throw e;
    const panels = await panelState(page);
    const wall = await page.$eval('#profile', (p) => p.dataset.wallMtagsPerS);
    fail(`after 60 s not every panel shows data (expected ${expected} panels, wall rate ` +
      `${wall} MTags/s):\n  ${panels.map((p) => JSON.stringify(p)).join('\n  ')}`);
  }
  checkPageErrors('while loading');
  const panels = await panelState(page);
  log(`all ${panels.length} panels show data: ${panels.map((p) => `${p.name} (${p.kind})`).join(', ')}`);

  // 3. Stop one measurement: its capture duration freezes, the others' goes on.
  const stopped = panels.find((p) => p.kind === 'Counter') ?? panels[0];
  await page.click(`${panelSelector(stopped.name)} button[data-action="stop"]`);
  await waitFor(page, 10, `${stopped.name}'s badge says stopped`, (sel) =>
    document.querySelector(sel)?.querySelector('.badge')?.textContent.trim() === 'stopped',
  panelSelector(stopped.name));
  const before = await panelState(page);
  const stoppedBefore = before.find((p) => p.name === stopped.name);
  const other = before.find((p) => p.name !== stopped.name && p.badge?.trim() === 'running');
  if (!other) fail('no other measurement is running after stopping one');
  log(`stopped ${stopped.name} at capture ${stoppedBefore.capturePs} ps; watching ${other.name}`);
  await sleep(2000);
  const after = await panelState(page);
  const stoppedAfter = after.find((p) => p.name === stopped.name);
  const otherAfter = after.find((p) => p.name === other.name);
  if (stoppedAfter.capturePs !== stoppedBefore.capturePs) {
    fail(`stopped ${stopped.name}'s capture went on: ` +
      `${stoppedBefore.capturePs} -> ${stoppedAfter.capturePs} ps`);
  }
  if (!(BigInt(otherAfter.capturePs) > BigInt(other.capturePs))) {
    fail(`running ${other.name}'s capture did not grow in 2 s: ` +
      `${other.capturePs} -> ${otherAfter.capturePs} ps`);
  }
  if (!(otherAfter.updates > other.updates)) {
    fail(`no snapshot arrived in 2 s (${other.name}: ${other.updates} -> ${otherAfter.updates} updates)`);
  }
  log(`${other.name}: capture ${other.capturePs} -> ${otherAfter.capturePs} ps, ` +
    `updates ${other.updates} -> ${otherAfter.updates}`);

  // 4. Align: set the virtual channel's delay on the page; the value shown follows the run's.
  const row = 'tr[data-channel="aligned"][data-key="delay"]';
  // Run in the page: the row's value text is `want`.
  const valueIs = (sel, want) =>
    document.querySelector(sel)?.querySelector('[data-field="value"]')?.textContent === want;
  await waitFor(page, 10, 'the aligned channel shows its delay of 0 ps', valueIs, row, '0 ps');
  await page.$eval(`${row} input`, (input) => { input.value = '1000'; });
  await page.click(`${row} button`);
  await waitFor(page, 10, 'the aligned channel shows its new delay of 1,000 ps', valueIs, row,
    '1,000 ps');
  log('set the aligned channel\'s delay to 1000 ps on the page');

  // 5. Download the results through the link and check them.
  const cdp = await page.browser().target().createCDPSession();
  await cdp.send('Browser.setDownloadBehavior',
    { behavior: 'allow', downloadPath: downloadDir, eventsEnabled: true });
  // The page names the file results.h5 (download attribute); a Content-Disposition name
  // from the server would take precedence, so the name Chromium chose is taken from CDP.
  let suggested = 'results.h5';
  cdp.on('Browser.downloadWillBegin', (e) => {
    suggested = e.suggestedFilename || suggested;
  });
  const downloaded = new Promise((resolve) => {
    cdp.on('Browser.downloadProgress', (e) => {
      if (e.state === 'completed' || e.state === 'canceled') resolve(e.state);
    });
  });
  await page.click('#download');
  const state = await Promise.race([downloaded, sleep(60000).then(() => 'timed out')]);
  if (state !== 'completed') fail(`the download of the results was ${state}`);
  const file = path.join(downloadDir, suggested);
  if (!fs.existsSync(file)) {
    const found = fs.readdirSync(downloadDir).join(', ') || 'nothing';
    fail(`the download did not produce ${file} (found: ${found})`);
  }
  if (suggested !== 'results.h5') log(`note: the download is named ${suggested}, not results.h5`);
  log(`downloaded ${file} (${fs.statSync(file).size} bytes)`);
  const check = spawnSync(PYTHON,
    [CHECK_RESULTS, file, stopped.name, stoppedBefore.capturePs, '--config', config],
    { encoding: 'utf8' });
  process.stdout.write(check.stdout ?? '');
  process.stderr.write(check.stderr ?? '');
  if (check.status !== 0) fail(`check_results.py failed (exit ${check.status ?? check.error})`);

  // 6. The picture.
  await page.screenshot({ path: path.join(outDir, 'serve.png'), fullPage: true });
  log(`saved ${path.join(outDir, 'serve.png')}`);
  checkPageErrors('while running');

  // 7. Stop the run: the server writes the results and exits with 0.
  await page.click('#stop-run');
  const { code, signal } = await waitExit(30);
  if (code !== 0) {
    fail(`the server exited with code ${code}${signal ? `, signal ${signal}` : ''} after "Stop run"`);
  }
  if (!fs.existsSync(resultsPath)) fail(`the server exited but left no ${resultsPath}`);
  log(`server exited with 0 and wrote ${resultsPath}`);
}

// ---------------------------------------------------------------------------------------------

const watchdog = setTimeout(() => {
  console.error(`browser_test: FAILED: the test did not finish within ${WHOLE_TEST_S} s`);
  if (server) server.kill('SIGKILL');
  process.exit(1);
}, WHOLE_TEST_S * 1000);

let status = 0;
try {
  await run();
  log('passed');
} catch (e) {
  console.error(`browser_test: FAILED: ${e instanceof Failure ? e.message : e.stack}`);
  status = 1;
} finally {
  if (browser) await browser.close().catch(() => {});
  await killServer();
  clearTimeout(watchdog);
}
process.exit(status);
