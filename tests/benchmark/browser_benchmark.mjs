// Browser benchmark (a measurement, not a test; scripts/browser_benchmark.sh runs it): how fast
// the page starts and redraws in headless Debian Chromium with software WebGL2 (SwiftShader),
// next to a bare WebGL2 page (one shader program, three frames) measured in the same browser
// run, so the figures are judged against the browser's own floor on this machine.
//
// For the default link and for DeepSeek-V3 on 1024 GPUs (recipe deepseek-v3-h100-1024), each
// run in a fresh browser context (empty HTTP and compiled-wasm caches):
//   first frame   performance.now() when the first frame's GL calls are issued
//   ready         window.megamem.ready (the first frame: settled layout, the verdict shown)
//   3 frames      the third frame drawn (the bare page's "ready")
//   init steps    the page's own marks (window.megamem.marks(): emscripten_get_now() around
//                 each start-up step, also performance.mark()s in a trace)
//   estimate      the page's first estimate (module tree and every timeline) and what-if table
//   warm full     the page's full estimate (estimate + what-if) once warm: 50 runs after 3 s of
//                 runs, against `megamem_benchmark --benchmark_filter=page_full_estimate`
//   dragging      the page's time per frame while a slider is dragged, and the browser's frame
//                 interval meanwhile (software rasterisation included)
// Medians over --runs runs (default 5) are printed, the pages interleaved run by run.
// --pages picks the links (default,deepseek; zh: the default link in Chinese, lang=zh, whose
// first frame waits for the CJK font fetched beside the wasm); each page also reports the font
// files it fetched. --compare LABEL=DIR (repeatable) measures other builds of the site in the
// same run, interleaved with it (build-flag trials, docs/performance.md).
//
// usage: node tests/benchmark/browser_benchmark.mjs [--site DIR] [--cli PATH] [--chromium PATH]
//                                                   [--runs N] [--trace FILE] [--json FILE]
//                                                   [--pages default,deepseek,zh]
//                                                   [--compare LABEL=DIR ...]
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { extname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

import { chromium } from 'playwright-core';

const { values: opts } = parseArgs({
  options: {
    site: { type: 'string', default: 'build/web-release/site' },
    chromium: { type: 'string', default: process.env.CHROMIUM_PATH || '/usr/bin/chromium' },
    cli: { type: 'string', default: 'build/native-release/cli/megamem' },
    runs: { type: 'string', default: '5' },
    trace: { type: 'string' },
    json: { type: 'string' },
    pages: { type: 'string', default: 'default,deepseek' },
    compare: { type: 'string', multiple: true, default: [] },
  },
});
const sites = [{ label: '', dir: resolve(opts.site) }, ...opts.compare.map((entry) => {
  const [label, dir] = entry.split('=');
  return { label, dir: resolve(dir) };
})];
const runs = Number(opts.runs);
for (const { dir } of sites) {
  for (const file of ['index.html', 'megamem.js', 'megamem.wasm']) {
    if (!existsSync(join(dir, file))) {
      console.error(`${join(dir, file)} missing: build the web-release preset first`);
      process.exit(1);
    }
  }
}

// The floor: a WebGL2 canvas as large as the page's, one program compiled and linked, three
// frames drawn with requestAnimationFrame.
const barePage = `<!doctype html><html><head><meta charset="utf-8"><style>
html,body{margin:0;height:100%;overflow:hidden}
canvas{position:fixed;inset:0;width:100vw;height:100vh;display:block}</style></head><body>
<canvas id="canvas"></canvas><script>
window.bare = { firstFrameMs: null, readyMs: null };
const canvas = document.getElementById('canvas');
canvas.width = Math.round(innerWidth * devicePixelRatio);
canvas.height = Math.round(innerHeight * devicePixelRatio);
const gl = canvas.getContext('webgl2');
function shader(type, text) {
  const s = gl.createShader(type); gl.shaderSource(s, text); gl.compileShader(s); return s;
}
const program = gl.createProgram();
gl.attachShader(program, shader(gl.VERTEX_SHADER, '#version 300 es\\nin vec2 p;' +
    'void main(){gl_Position=vec4(p,0.0,1.0);}'));
gl.attachShader(program, shader(gl.FRAGMENT_SHADER, '#version 300 es\\nprecision mediump float;' +
    'out vec4 c;void main(){c=vec4(0.3,0.5,0.8,1.0);}'));
gl.linkProgram(program);
if (!gl.getProgramParameter(program, gl.LINK_STATUS)) throw new Error('link failed');
gl.bindBuffer(gl.ARRAY_BUFFER, gl.createBuffer());
gl.bufferData(gl.ARRAY_BUFFER, new Float32Array([-1, -1, 1, -1, 0, 1]), gl.STATIC_DRAW);
gl.enableVertexAttribArray(0);
gl.vertexAttribPointer(0, 2, gl.FLOAT, false, 0, 0);
let frames = 0;
function frame() {
  gl.viewport(0, 0, canvas.width, canvas.height);
  gl.clearColor(0.08, 0.08, 0.09, 1); gl.clear(gl.COLOR_BUFFER_BIT);
  gl.useProgram(program); gl.drawArrays(gl.TRIANGLES, 0, 3);
  frames += 1;
  if (frames === 1) bare.firstFrameMs = performance.now();
  if (frames === 3) { bare.readyMs = performance.now(); return; }
  requestAnimationFrame(frame);
}
requestAnimationFrame(frame);
</script></body></html>`;

// Site number i under /s<i>/, the bare page at /bare.html; nothing cached by the browser.
const mimeTypes = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript',
                    '.wasm': 'application/wasm' };
const server = createServer((request, response) => {
  const path = new URL(request.url, 'http://localhost').pathname;
  const headers = { 'Cache-Control': 'no-store' };
  if (path === '/bare.html') {
    response.writeHead(200, { ...headers, 'Content-Type': mimeTypes['.html'] }).end(barePage);
    return;
  }
  const [, number, ...rest] = path.split('/');
  const site = sites[Number(number.slice(1))]?.dir ?? '/nonexistent';
  const file = join(site, rest.join('/') || 'index.html');
  if (!file.startsWith(site) || !existsSync(file)) {
    response.writeHead(404).end();
    return;
  }
  response.writeHead(200, { ...headers, 'Content-Type': mimeTypes[extname(file)] ?? 'application/octet-stream' });
  response.end(readFileSync(file));
});
await new Promise((ready) => server.listen(0, '127.0.0.1', ready));
const base = `http://127.0.0.1:${server.address().port}/`;

// A recipe's link query (presets/recipes/<recipe>.json), e.g. DeepSeek-V3 on 1024 GPUs.
const recipeQuery = (recipe) => execFileSync(resolve(opts.cli), ['url', 'encode', '--recipe', recipe],
                                             { encoding: 'utf8' }).trim().split('?')[1];
const links = {
  default: { name: 'default link', query: '' },
  deepseek: { name: 'DeepSeek-V3 on 1024 GPUs', query: `?${recipeQuery('deepseek-v3-h100-1024')}`,
              recipe: 'deepseek-v3-h100-1024' },
  zh: { name: 'default link, lang=zh', query: `?${recipeQuery('llama-3-70b-h100-64')}&lang=zh` },
};
const pages = [{ name: 'bare WebGL2 page', url: `${base}bare.html`, bare: true }];
for (const [number, { label }] of sites.entries()) {
  for (const key of opts.pages.split(',')) {
    const link = links[key];
    pages.push({ name: `${label ? `${label}: ` : ''}megamem, ${link.name}`, slider: 'layers',
                 url: `${base}s${number}/${link.query}`, recipe: link.recipe });
  }
}

const browser = await chromium.launch({
  executablePath: opts.chromium,
  headless: true,
  args: ['--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader',
         '--disable-background-networking', '--disable-component-update', '--disable-sync',
         '--no-first-run'],
});

const median = (xs) => {
  const sorted = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

// The page's frame times while a slider is dragged to and fro for about 1.5 s.
async function dragSlider(page, label) {
  const { rects, pixelRatio } = await page.evaluate(
      () => ({ rects: window.megamem.inputRects(), pixelRatio: window.megamem.pixelRatio }));
  const rect = rects[label];
  if (!rect) return null;
  const y = (rect.y + rect.height / 2) / pixelRatio;
  const left = rect.x / pixelRatio + 10;
  const width = rect.width / pixelRatio - 20;
  await page.mouse.move(left + width * 0.3, y);
  await page.mouse.down();
  const before = await page.evaluate(() => ({ frames: window.megamem.frames(), t: performance.now(),
                                              estimates: window.megamem.state().estimates_computed }));
  for (let i = 0; i < 90; i += 1) {
    await page.mouse.move(left + width * (0.3 + 0.25 * Math.sin(i / 6)), y);
    await page.waitForTimeout(16);
  }
  const after = await page.evaluate(() => ({ frames: window.megamem.frames(), t: performance.now(),
                                             state: window.megamem.state() }));
  await page.mouse.up();
  return {
    page_frame_ms: after.state.timings_ms.frame,
    page_frame_worst_ms: after.state.timings_ms.frame_worst,
    browser_frame_ms: (after.t - before.t) / Math.max(after.frames - before.frames, 1),
    estimates: after.state.estimates_computed - before.estimates,
  };
}

async function measure(target, trace) {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  const page = await context.newPage();
  const fonts = [];
  page.on('request', (request) => {
    if (request.url().includes('/fonts/')) fonts.push(request.url().split('/').pop());
  });
  if (trace) await browser.startTracing(page, { path: trace, screenshots: false });
  await page.goto(target.url);
  if (target.bare) {
    await page.waitForFunction(() => window.bare && window.bare.readyMs !== null, null, { timeout: 60_000 });
    const bare = await page.evaluate(() => window.bare);
    await context.close();
    return { first_frame_ms: bare.firstFrameMs, ready_ms: bare.readyMs, three_frames_ms: bare.readyMs };
  }
  // The third frame's time, seen from the page: a frame callback after each animation frame.
  await page.evaluate(() => {
    window.benchmarkThirdFrameMs = null;
    const poll = () => {
      if (window.megamem && window.megamem.frames() >= 3) {
        window.benchmarkThirdFrameMs = performance.now();
      } else {
        requestAnimationFrame(poll);
      }
    };
    requestAnimationFrame(poll);
  });
  await page.waitForFunction(() => window.benchmarkThirdFrameMs !== null, null, { timeout: 60_000 });
  if (trace) await browser.stopTracing();
  const start = await page.evaluate(() => ({
    first_frame_ms: window.megamem.firstFrameMs,
    ready_ms: window.megamem.readyMs ?? window.megamem.firstFrameMs,
    three_frames_ms: window.benchmarkThirdFrameMs,
    marks: window.megamem.marks ? window.megamem.marks() : [],
    wasm_loaded_ms: performance.getEntriesByType('resource')
        .filter((r) => r.name.endsWith('.wasm')).map((r) => r.responseEnd)[0] ?? null,
  }));
  const state = await page.evaluate(() => window.megamem.state());  // finishes the what-if table
  start.estimate_ms = state.timings_ms.estimate;
  start.what_if_ms = state.timings_ms.what_if;
  start.error = state.error;
  // The full estimate (module tree, timelines, what-if) once the code is warm: the page's
  // wasm is compiled lazily and optimised in the background, so the first runs are slower.
  start.full_estimate_ms = await page.evaluate(() => {
    if (!window.megamem.fullEstimateMs) return null;  // a build before this benchmark
    const deadline = performance.now() + 3000;
    while (performance.now() < deadline) window.megamem.fullEstimateMs(5);
    return window.megamem.fullEstimateMs(50);
  });
  start.drag = await dragSlider(page, target.slider);
  start.fonts_fetched = fonts;
  await context.close();
  return start;
}

const results = new Map(pages.map((p) => [p.name, []]));
for (let run = 0; run < runs; run += 1) {
  for (const target of pages) {
    const trace = opts.trace && run === 0 && !target.bare && target.recipe
                      ? opts.trace : undefined;
    results.get(target.name).push(await measure(target, trace));
  }
}
await browser.close();
server.close();

const fmt = (x) => (Number.isFinite(x) ? x.toFixed(x < 10 ? 2 : 0) : '-');
const summary = {};
const bareReady = median(results.get(pages[0].name).map((r) => r.ready_ms));
console.log(`Headless Chromium (${opts.chromium}), SwiftShader WebGL2, 1440x900, medians of ${runs} runs, ms after navigation`);
console.log('page'.padEnd(36) + 'first frame'.padStart(12) + 'ready'.padStart(8) + '3 frames'.padStart(10) +
            'ready/bare'.padStart(12) + 'estimate'.padStart(10) + 'what-if'.padStart(9) + 'warm full'.padStart(11) +
            'drag: page'.padStart(12) + 'browser'.padStart(9));
for (const target of pages) {
  const rs = results.get(target.name);
  const m = (f) => median(rs.map(f));
  const row = {
    first_frame_ms: m((r) => r.first_frame_ms), ready_ms: m((r) => r.ready_ms),
    three_frames_ms: m((r) => r.three_frames_ms), estimate_ms: m((r) => r.estimate_ms),
    what_if_ms: m((r) => r.what_if_ms), full_estimate_ms: m((r) => r.full_estimate_ms),
    drag_page_frame_ms: m((r) => r.drag?.page_frame_ms),
    drag_browser_frame_ms: m((r) => r.drag?.browser_frame_ms),
  };
  row.ready_over_bare = row.ready_ms / bareReady;
  summary[target.name] = { ...row, runs: rs };
  console.log(target.name.padEnd(36) + fmt(row.first_frame_ms).padStart(12) + fmt(row.ready_ms).padStart(8) +
              fmt(row.three_frames_ms).padStart(10) + `${row.ready_over_bare.toFixed(2)}x`.padStart(12) +
              fmt(row.estimate_ms).padStart(10) + fmt(row.what_if_ms).padStart(9) +
              fmt(row.full_estimate_ms).padStart(11) +
              fmt(row.drag_page_frame_ms).padStart(12) + fmt(row.drag_browser_frame_ms).padStart(9) +
              (target.bare ? '' : `  fonts: ${rs[0].fonts_fetched.join(' ') || 'none'}`));
}
// The start-up steps of the page (median time of each mark after navigation).
for (const target of pages.filter((p) => !p.bare)) {
  const rs = results.get(target.name);
  const names = (rs[0].marks ?? []).map((mark) => mark.name);
  if (names.length === 0) continue;
  console.log(`\n${target.name}: start-up marks (ms after navigation; step = since the previous mark)`);
  console.log(`  ${'wasm downloaded'.padEnd(34)}${fmt(median(rs.map((r) => r.wasm_loaded_ms))).padStart(8)}`);
  let previous = null;
  for (const name of names) {
    const at = median(rs.map((r) => r.marks.find((mark) => mark.name === name)?.ms));
    const step = previous === null ? '' : `+${fmt(at - previous)}`;
    console.log(`  ${name.padEnd(34)}${fmt(at).padStart(8)}${step.padStart(10)}`);
    previous = at;
  }
}
if (opts.json) writeFileSync(opts.json, JSON.stringify(summary, null, 2));
