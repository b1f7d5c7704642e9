// Browser end-to-end test: the web page and the native CLI give the same per-rank memory.
//
// Serves the static site on a free localhost port, opens it in headless Debian Chromium
// (software WebGL2 through SwiftShader), waits for window.megamem.ready, and checks that
//   1. the page's per-rank weight, gradient and optimizer bytes equal those of
//      `megamem estimate --megatron-args <page's flags> --world-size <n> --json`;
//   2. editing an input with mouse and keyboard (Ctrl+click a slider, type a value, Enter)
//      recomputes the estimate, which again matches the CLI;
//   3. an invalid layout shows an error naming its field and keeps the last result.
// Screenshots go to the artifacts folder. Exit 77 (ctest: skipped) when the site is not built.
//
// usage: node web_page_matches_cli.mjs --site DIR --cli PATH --artifacts DIR
import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { extname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

import { chromium } from 'playwright-core';

const { values: options } = parseArgs({
  options: {
    site: { type: 'string' },
    cli: { type: 'string' },
    artifacts: { type: 'string', default: 'build/e2e-artifacts' },
    chromium: { type: 'string', default: process.env.CHROMIUM_PATH || '/usr/bin/chromium' },
  },
});

const SKIPPED = 77;
const siteDir = resolve(options.site ?? 'build/web-release/site');
for (const file of ['index.html', 'megamem.js', 'megamem.wasm']) {
  if (!existsSync(join(siteDir, file))) {
    console.log(`SKIP: ${join(siteDir, file)} missing (build the web-release preset first)`);
    process.exit(SKIPPED);
  }
}
if (!options.cli || !existsSync(options.cli)) {
  console.error(`FAIL: CLI not found: ${options.cli}`);
  process.exit(1);
}
mkdirSync(options.artifacts, { recursive: true });

let failures = 0;
function check(condition, message) {
  console.log(`${condition ? 'ok  ' : 'FAIL'} ${message}`);
  if (!condition) failures += 1;
}

// --- static server (application/wasm so the browser can compile while streaming) ----------
const mimeTypes = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript',
  '.wasm': 'application/wasm',
  '.png': 'image/png',
};
const server = createServer((request, response) => {
  const path = new URL(request.url, 'http://localhost').pathname;
  const file = join(siteDir, path === '/' ? 'index.html' : path);
  if (!file.startsWith(siteDir) || !existsSync(file)) {
    response.writeHead(404).end();
    return;
  }
  response.writeHead(200, { 'Content-Type': mimeTypes[extname(file)] ?? 'application/octet-stream' });
  response.end(readFileSync(file));
});
await new Promise((ready) => server.listen(0, '127.0.0.1', ready));
const url = `http://127.0.0.1:${server.address().port}/`;

// --- the CLI, run on the page's own Megatron flags ----------------------------------------
function cliEstimate(state) {
  const stdout = execFileSync(options.cli, [
    'estimate', '--megatron-args', state.megatron_args,
    '--world-size', String(state.world_size), '--json',
  ], { encoding: 'utf8', maxBuffer: 1 << 28 });  // timelines make the JSON large
  return JSON.parse(stdout);
}

const categories = ['weight_bytes', 'gradient_bytes', 'optimizer_bytes'];

function checkPageMatchesCli(state, when) {
  check(state.result !== null && state.error === null, `${when}: the page has a valid estimate`);
  if (state.result === null) return;
  const cli = cliEstimate(state);
  check(cli.ranks.length === state.result.ranks.length,
        `${when}: ${state.result.ranks.length} pipeline ranks on the page and in the CLI`);
  for (const pageRank of state.result.ranks) {
    const cliRank = cli.ranks.find((rank) => rank.pp_rank === pageRank.pp_rank);
    for (const key of categories) {
      check(cliRank !== undefined && cliRank[key] === pageRank[key],
            `${when}: PP rank ${pageRank.pp_rank} ${key} page ${pageRank[key]} = CLI ${cliRank?.[key]}`);
    }
  }
}

const pageState = (page) => page.evaluate(() => window.megamem.state());

// Replaces a number the way a user types one: Ctrl+click turns an ImGui slider into a text
// field with its text selected; an input field is clicked and its text selected with Ctrl+A;
// then type the value and press Enter.
async function typeIntoSlider(page, label, value) {
  const { rects, pixelRatio } = await page.evaluate(
      () => ({ rects: window.megamem.inputRects(), pixelRatio: window.megamem.pixelRatio }));
  const rect = rects[label];
  if (!rect) throw new Error(`no input labelled "${label}" (have: ${Object.keys(rects)})`);
  const x = (rect.x + rect.width / 2) / pixelRatio;
  const y = (rect.y + rect.height / 2) / pixelRatio;
  const slider = rect.kind === undefined || rect.kind === 'slider';
  await page.mouse.move(x, y);
  await page.waitForTimeout(100);  // a few frames, so ImGui sees the slider hovered
  if (slider) await page.keyboard.down('Control');
  await page.mouse.down();
  await page.waitForTimeout(50);
  await page.mouse.up();
  if (slider) await page.keyboard.up('Control');
  await page.waitForTimeout(100);
  if (!slider) await page.keyboard.press('Control+A');
  await page.keyboard.type(String(value), { delay: 30 });
  await page.keyboard.press('Enter');
  await page.mouse.move(1, page.viewportSize().height - 1);  // no tooltip over the screenshot
}

async function waitForState(page, predicate, what) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const state = await pageState(page);
    if (predicate(state)) return state;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await page.waitForTimeout(50);
  }
}

// --- the browser ----------------------------------------------------------------------------
const userDataDir = mkdtempSync(join(tmpdir(), 'megamem-e2e-chromium-'));
const context = await chromium.launchPersistentContext(userDataDir, {
  executablePath: options.chromium,
  headless: true,
  viewport: { width: 1440, height: 900 },
  args: [
    '--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
    '--no-first-run',
  ],
});
const page = context.pages()[0] ?? await context.newPage();
const pageErrors = [];
page.on('console', (message) => {
  if (message.type() === 'error') pageErrors.push(message.text());
});
page.on('pageerror', (error) => pageErrors.push(String(error)));

try {
  await page.goto(url);
  await page.waitForFunction(() => window.megamem && window.megamem.ready, null,
                             { timeout: 60_000 });
  const initial = await pageState(page);
  await page.screenshot({ path: join(options.artifacts, 'initial.png') });
  console.log(`page flags: ${initial.megatron_args} (world size ${initial.world_size})`);
  checkPageMatchesCli(initial, 'initial page');

  // A user edit: more layers (120 splits over the default recipe's PP 8 x VPP 5 chunks).
  await typeIntoSlider(page, 'layers', 120);
  const edited = await waitForState(page, (state) => /--num-layers[ =]120\b/.test(state.megatron_args),
                                    'the layers edit to reach the flags');
  await page.waitForTimeout(200);
  await page.screenshot({ path: join(options.artifacts, 'layers-120.png') });
  check(edited.estimates_computed > initial.estimates_computed, 'the edit recomputed the estimate');
  check(edited.result.ranks[0].weight_bytes > initial.result.ranks[0].weight_bytes,
        'more layers, more weight bytes on PP rank 0');
  checkPageMatchesCli(edited, 'after the edit');

  // An invalid layout: the heads (32 or 64) do not split over TP 3. The result stays, the
  // error names a field.
  await typeIntoSlider(page, 'TP', 3);
  const invalid = await waitForState(page, (state) => state.error !== null, 'an error for TP 3');
  await page.waitForTimeout(200);
  await page.screenshot({ path: join(options.artifacts, 'invalid-tp.png') });
  check(invalid.error.field.length > 0 && invalid.error.message.length > 0,
        `TP 3 is rejected: ${invalid.error.field}: ${invalid.error.message}`);
  check(JSON.stringify(invalid.result) === JSON.stringify(edited.result),
        'the last valid result stays on screen');

  check(pageErrors.length === 0, `no errors in the page console ${pageErrors.join(' | ')}`);
} catch (error) {
  failures += 1;
  console.error(`FAIL ${error.stack ?? error}`);
  await page.screenshot({ path: join(options.artifacts, 'failure.png') }).catch(() => {});
} finally {
  await context.close();
  server.close();
  rmSync(userDataDir, { recursive: true, force: true });
}

console.log(failures === 0 ? 'e2e: all checks passed' : `e2e: ${failures} check(s) failed`);
process.exit(failures === 0 ? 0 : 1);
