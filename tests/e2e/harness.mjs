// Shared pieces of the browser end-to-end tests: command-line options, a static server for
// the built site, headless Debian Chromium (software WebGL2 through SwiftShader), checks that
// count failures, and helpers that drive the page the way a person does (mouse, keyboard)
// through the rectangles the page reports (window.megamem.inputRects()).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { extname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

import { chromium } from 'playwright-core';

export const SKIPPED = 77;

// --site DIR --cli PATH --artifacts DIR [--chromium PATH]; exits 77 when the site is missing.
export function options() {
  const { values } = parseArgs({
    options: {
      site: { type: 'string' },
      cli: { type: 'string' },
      artifacts: { type: 'string', default: 'build/e2e-artifacts' },
      chromium: { type: 'string', default: process.env.CHROMIUM_PATH || '/usr/bin/chromium' },
    },
  });
  values.site = resolve(values.site ?? 'build/web-release/site');
  for (const file of ['index.html', 'megamem.js', 'megamem.wasm']) {
    if (!existsSync(join(values.site, file))) {
      console.log(`SKIP: ${join(values.site, file)} missing (build the web-release preset first)`);
      process.exit(SKIPPED);
    }
  }
  if (!values.cli || !existsSync(values.cli)) {
    console.error(`FAIL: CLI not found: ${values.cli}`);
    process.exit(1);
  }
  mkdirSync(values.artifacts, { recursive: true });
  return values;
}

let failures = 0;
let checks = 0;
export function check(condition, message) {
  checks += 1;
  console.log(`${condition ? 'ok  ' : 'FAIL'} ${message}`);
  if (!condition) failures += 1;
  return condition;
}
export function fail(message) { check(false, message); }
// A timing, printed and never asserted: wall-clock limits fail on a busy machine without the
// page having changed, so speed is judged by scripts/browser_benchmark.sh (docs/performance.md).
export function measured(message) { console.log(`info ${message}`); }
export function finish(name) {
  console.log(failures === 0 ? `${name}: all ${checks} checks passed`
                             : `${name}: ${failures} of ${checks} checks failed`);
  process.exit(failures === 0 ? 0 : 1);
}

// Serves the site on a free localhost port (application/wasm for streaming compilation).
export async function serve(siteDir) {
  const mimeTypes = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript',
                      '.wasm': 'application/wasm' };
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
  return { server, url: `http://127.0.0.1:${server.address().port}/` };
}

export async function launch(opts, contextOptions = {}) {
  const userDataDir = mkdtempSync(join(tmpdir(), 'megamem-e2e-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: opts.chromium,
    headless: true,
    viewport: { width: 1440, height: 900 },
    args: [
      '--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
      '--no-first-run',
    ],
    ...contextOptions,
  });
  const page = context.pages()[0] ?? await context.newPage();
  const errors = [];
  page.on('console', (message) => { if (message.type() === 'error') errors.push(message.text()); });
  page.on('pageerror', (error) => errors.push(String(error)));
  const close = async () => {
    await context.close();
    rmSync(userDataDir, { recursive: true, force: true });
  };
  return { context, page, errors, close };
}

export async function openPage(page, url) {
  await page.goto(url);
  await page.waitForFunction(() => window.megamem && window.megamem.ready, null,
                             { timeout: 60_000 });
  // A few frames, then idle: the rectangles are known and the layout is the one that stays
  // (the what-if table is priced after the first frames and pushes the planner down: a click
  // aimed before that at 'plan search' went below the viewport, web_readable at 1280 x 720).
  await page.waitForFunction(() => window.megamem.frames() >= 4, null, { timeout: 60_000 });
  await page.waitForFunction(() => window.megamem.idle(), null, { timeout: 60_000 });
}

// Opens a link in a page already loaded, as the browser's back and forward buttons do
// (pushState, then popstate): the page reads the address with the same app_open_link() as
// at load, without reloading the wasm. Waits for two frames drawn after it.
export async function navigate(page, url) {
  const frames = await page.evaluate((link) => {
    history.pushState(null, '', link);
    window.dispatchEvent(new PopStateEvent('popstate'));
    return window.megamem.frames();
  }, url);
  await page.waitForFunction((n) => window.megamem.frames() >= n + 2, frames, { timeout: 60_000 });
}

// Hovers the step timeline a quarter of its width left of its centre (a forward column), so
// its hover text shows.
export async function hoverTimeline(page) {
  await scrollIntoView(page, 'timeline');
  const { x, y, rect, pixelRatio } = await widgetCenter(page, 'timeline');
  const since = await frameCount(page);
  await page.mouse.move(x - rect.width / pixelRatio / 4, y);
  await afterInput(page, since);
}

export const pageState = (page) => page.evaluate(() => window.megamem.state());

// Waits until the page has stopped drawing (window.megamem.idle(): no frames owed to input,
// nothing under way), so what it reports is what stays on screen, not a frame of a table still
// fitting its columns. Frames that merely come slowly are no sign of that: on a loaded machine
// one frame can take longer than any fixed quiet period.
export async function waitForIdle(page, timeoutMs = 60_000) {
  await page.waitForFunction(() => window.megamem.idle(), null, { timeout: timeoutMs });
}

// What a timed-out wait saw last: enough to tell a lost click from a search that never ended.
function stateSummary(state) {
  const p = state.planner ?? {};
  return JSON.stringify({
    error: state.error?.message ?? null,
    planner: { status: p.status, stale: p.stale, error: p.error?.message ?? null,
               progress: p.progress },
    query: state.query,
  });
}

// The budget is generous: a loaded 2-core machine can take seconds per frame of software
// WebGL, and a wait that gives up early fails a page that works (issue 24).
export async function waitForState(page, predicate, what, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const state = await pageState(page);
    if (predicate(state)) return state;
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what} (the page at the end: ` +
                      `${stateSummary(state)}; the last ${lastClickTrace()})`);
    }
    await page.waitForTimeout(50);
  }
}

// Draws frames after a mouse move (an idle page draws none) until the page is idle again, so
// what state() reports is what this state leaves on screen. An edited field's blinking cursor
// keeps the page drawing: a shorter `idleTimeoutMs` then gives up on idle (an error).
let redrawCorner = 0;
export async function redraw(page, idleTimeoutMs = 60_000) {
  const frames = await page.evaluate(() => window.megamem.frames());
  const viewport = page.viewportSize();
  redrawCorner = 1 - redrawCorner;
  await page.mouse.move(viewport.width - 2 - redrawCorner, viewport.height - 2);
  await page.waitForFunction((n) => window.megamem.frames() >= n + 2, frames, { timeout: 60_000 });
  await waitForIdle(page, idleTimeoutMs);
}

// The centre of a labelled widget in CSS pixels.
export async function widgetCenter(page, label) {
  // A state() change can come before the frame that draws its widgets (a what-if row):
  // give the page a few frames to lay the widget out before giving up on it.
  await page.waitForFunction((l) => window.megamem.inputRects()[l] !== undefined, label,
                             { timeout: 3_000 }).catch(() => {});
  const { rects, pixelRatio } = await page.evaluate(
      () => ({ rects: window.megamem.inputRects(), pixelRatio: window.megamem.pixelRatio }));
  const rect = rects[label];
  if (!rect) throw new Error(`no widget labelled "${label}" (have: ${Object.keys(rects).join(', ')})`);
  return { x: (rect.x + rect.width / 2) / pixelRatio, y: (rect.y + rect.height / 2) / pixelRatio,
           rect, pixelRatio };
}

// Scrolls the window under a widget until the widget is fully inside the viewport. The wheel
// turns over the widget's column; where that point is a scrolled-through text box (ImGui gives
// the wheel to the innermost scrollable window and does not pass it on at its end), it turns
// in the window's padding just left of the widget instead.
export async function scrollIntoView(page, label) {
  let lastTop = null;
  let besideWidget = false;
  for (let i = 0; i < 40; i += 1) {
    const { x, y, rect, pixelRatio } = await widgetCenter(page, label);
    const viewport = page.viewportSize();
    const top = rect.y / pixelRatio;
    const bottom = (rect.y + rect.height) / pixelRatio;
    if (top >= 40 && bottom <= viewport.height - 10) return;
    if (top === lastTop) {
      // The top bar's widgets do not scroll, nor need to.
      if (besideWidget && top >= 0 && bottom <= viewport.height) return;
      besideWidget = true;
    }
    lastTop = top;
    const wheelX = besideWidget ? Math.max(rect.x / pixelRatio - 8, 2) : x;
    const since = await frameCount(page);
    await page.mouse.move(wheelX, Math.min(Math.max(y, 60), viewport.height - 20));
    await page.mouse.wheel(0, bottom > viewport.height - 10 ? 200 : -200);
    await inputSeen(page, since);  // not idle: a search keeps the page drawing
  }
  throw new Error(`could not scroll "${label}" into view`);
}

// The widget's centre once the page has stopped drawing (window.megamem.idle(): no frames owed
// to input, nothing under way), or, while it keeps drawing (a search), once two frames in a row
// drew the widget in the same place. A click right after a state change (a planner row applied,
// a search cancelled) could land where the widget was a frame earlier. Frames that merely came
// slowly are not a settled layout: on a loaded machine one frame can take more than 300 ms,
// and the click on 'plan search' after Cancel landed beside the button (issue 24).
async function settledCenter(page, label) {
  let previous = await widgetCenter(page, label);
  for (let i = 0; i < 20; i += 1) {
    if (await page.evaluate(() => window.megamem.idle())) return widgetCenter(page, label);
    const frames = await frameCount(page);
    await page.waitForFunction(
        (n) => window.megamem.idle() || window.megamem.frames() >= n + 2, frames,
        { timeout: 60_000 });
    const now = await widgetCenter(page, label);
    if (now.x === previous.x && now.y === previous.y) return now;
    previous = now;
  }
  return previous;
}

// Waits until the page has drawn `count` frames after the input just sent (input wakes the
// frame loop: platform_web.cpp), however long a frame takes on a loaded machine.
export async function inputSeen(page, since, count = 2) {
  await page.waitForFunction(([n, c]) => window.megamem.frames() >= n + c, [since, count],
                             { timeout: 60_000 });
}

export const frameCount = (page) => page.evaluate(() => window.megamem.frames());

// After an input sent when `since` frames had been drawn: the frames that handle it, then
// idle (the frames owed to it drawn: hover effects and tooltips are on screen), so state() and
// inputRects() describe what stays. Never a fixed sleep: on a loaded machine a frame can take
// longer than any (web_ux's tap on the verdict was not drawn within 250 ms). `idle: false`
// where an edited field's blinking cursor keeps the page drawing.
export async function afterInput(page, since, { idle = true } = {}) {
  await inputSeen(page, since);
  if (idle) await waitForIdle(page);
}

// Moves the pointer onto a labelled widget and waits until its hover is drawn.
export async function hover(page, label) {
  const { x, y } = await widgetCenter(page, label);
  const since = await frameCount(page);
  await page.mouse.move(x, y);
  await afterInput(page, since);
}

// Taps a point of a touch screen and waits until the page has drawn what the tap did.
export async function tapAt(page, x, y) {
  const since = await frameCount(page);
  await page.touchscreen.tap(x, y);
  await afterInput(page, since);
}

// Waits until the widget labelled `label` has the keyboard (state().inputRects()'s
// "keyboard focus"), before typing into it.
export async function waitForKeyboardFocus(page, label) {
  await page.waitForFunction((l) => window.megamem.inputRects()['keyboard focus']?.kind === l,
                             label, { timeout: 60_000 });
}

// Taps Tab or Enter as a person does: the key goes down and up at once. Both DOM events are
// dispatched in one task, so the page queues them together and sees the key down for one frame
// (platform_web.cpp apply_key_events). Sent through the browser's input pipeline (CDP, or
// keyboard.press()), the keyup waits for the keydown's acknowledgement: on a loaded machine it
// came frames later, the page rightly saw a held key, ImGui repeated it, and one Tab moved the
// focus past several controls (web_keyboard: "never: EP, EP +, EP -", three in a row).
// Emscripten's GLFW reads keyCode, which a constructed KeyboardEvent does not take.
const virtualKeyCodes = { Tab: 9, Enter: 13 };
export async function tapKey(page, key) {
  await page.evaluate(([name, keyCode]) => {
    const target = document.activeElement ?? document.body;
    for (const type of ['keydown', 'keyup']) {
      const event = new KeyboardEvent(type, { key: name, code: name, bubbles: true,
                                              cancelable: true });
      Object.defineProperty(event, 'keyCode', { get: () => keyCode });
      Object.defineProperty(event, 'which', { get: () => keyCode });
      target.dispatchEvent(event);
    }
  }, [key, virtualKeyCodes[key]]);
}

// Opens the model picker and types once its filter has the keyboard, then Enter picks the
// first match (a fixed 100 ms before typing was too short on a loaded machine).
// `picker` is the top bar's (or, on a phone, the settings' 'model preset').
export async function pickModel(page, id, picker = 'top model') {
  await click(page, picker);
  await waitForKeyboardFocus(page, 'picker filter');
  await page.keyboard.type(id, { delay: 10 });
  await page.keyboard.press('Enter');
  // The pick closes the picker: wait for that before anything else is clicked.
  await page.waitForFunction(() => window.megamem.inputRects()['picker filter'] === undefined,
                             null, { timeout: 60_000 });
}

// Widgets whose hover the page reports in inputRects()['pointer'] (record_item in
// web/widgets.cpp; chart points in planner_chart.cpp). Text fields, sliders and combos are
// composite items whose hover ImGui does not report for the whole.
const POINTER_KINDS = new Set(['button', 'checkbox', 'radio', 'row', 'tree', 'header', 'chart',
                               'point', 'label', 'text', 'progress']);

// Moves the pointer onto the widget until the page reports it there: a widget that moved after
// it was aimed at (a layout still settling, a line wrapped above it) is aimed at again, so the
// press lands on it. A press aimed at an old position was the dropped Cancel click of issue 24.
async function pointAt(page, label) {
  let seen = null;
  for (let attempt = 0; attempt < 10; attempt += 1) {
    // Scrolled into view again: the settling layout can move the widget out of it, and a
    // pointer outside the viewport reaches no page (no frame would ever see it).
    await scrollIntoView(page, label);
    const { x, y, rect } = await settledCenter(page, label);
    const viewport = page.viewportSize();
    if (y < 0 || y >= viewport.height) continue;
    const frames = await frameCount(page);
    await page.mouse.move(x + 1, y);
    await page.mouse.move(x, y);
    await inputSeen(page, frames);
    if (!POINTER_KINDS.has(rect.kind)) return;
    seen = await page.evaluate(() => window.megamem.inputRects().pointer?.kind ?? null);
    if (seen === label) return;
  }
  throw new Error(`the page never saw the pointer on "${label}" (it saw ${seen})`);
}

// Items Dear ImGui makes active when pressed (ButtonBehavior), so that a press on them shows as
// their ID in inputLog()'s active_id; the rest (text, charts, progress) take no active ID.
const PRESSED_KINDS = new Set(['button', 'checkbox', 'radio', 'row', 'tree', 'header']);

// The first frame after `afterFrame` that Dear ImGui drew with the mouse button `down` (or up),
// from window.megamem.inputLog(): a press or release is seen when such a frame was drawn, not
// after a count of frames (under load a release came later than the two frames after it,
// issue 24).
async function seenFrame(page, afterFrame, down) {
  const handle = await page.waitForFunction(
      ([after, d]) => window.megamem.inputLog().find((e) => e.frame > after && e.down === d),
      [afterFrame, down], { timeout: 60_000 });
  return handle.jsonValue();
}

const lastLoggedFrame = (page) =>
  page.evaluate(() => window.megamem.inputLog().at(-1)?.frame ?? -1);

// Hover, press and release, each seen by Dear ImGui in its own frames before the next input:
// the hover before the press, the press before the release, the release before the mouse
// moves on (fixed sleeps, and then counts of frames, lost clicks under load, issue 24). A
// press or release that missed the item (another item or nothing active, the item not under
// the pointer) is an error with the trace, not a click that silently did nothing.
export async function click(page, label) {
  await pointAt(page, label);
  const rect = await page.evaluate((l) => window.megamem.inputRects()[l], label);
  const target = rect?.id ?? 0;
  const before = await lastLoggedFrame(page);
  await page.mouse.down();
  const press = await seenFrame(page, before, true);
  const frames = await frameCount(page);
  await page.mouse.up();
  const release = await seenFrame(page, press.frame, false);
  await inputSeen(page, frames);  // and a frame after it: what the click did is drawn
  lastClick = { label, trace: await inputTrace(page, target, before) };
  if (!PRESSED_KINDS.has(rect?.kind) || target === 0) return;
  const missed = press.active_id !== target
                     ? `the press landed on ${press.active_id === 0 ? 'nothing' : 'another item'}`
                 : release.hovered_id !== target ? 'the release was not over it' : '';
  if (missed) throw new Error(`lost ${lastClickTrace()} (${missed})`);
}

// The last click as Dear ImGui saw it, frame by frame (window.megamem.inputLog()), for a
// test to print when the click did not do what it should: "f12 down hover=T active=T" is a
// press on the target; a press whose active item is another one, or none, was lost.
let lastClick = { label: '', trace: '' };
export const lastClickTrace = () => `click on "${lastClick.label}": ${lastClick.trace}`;

async function inputTrace(page, target, fromFrame) {
  const log = await page.evaluate(() => window.megamem.inputLog());
  const name = (id) => (id === 0 ? '0' : id === target ? 'T' : String(id));
  let previous = '';
  const lines = [];
  for (const e of log.filter((entry) => entry.frame >= fromFrame)) {
    const line = `${e.down ? 'down' : 'up'} at ${e.x},${e.y} in "${e.window}" (at y ` +
                 `${e.window_y}, scrolled ${e.scroll_y} of ${e.content_height}) ` +
                 `hover=${name(e.hovered_id)} active=${name(e.active_id)}` +
                 (e.nav_blocks_hover ? ' (keyboard navigation blocks hovering)' : '');
    if (line !== previous) lines.push(`f${e.frame} ${line}`);
    previous = line;
  }
  return lines.join('; ');
}

// Types a value into a labelled number: a slider turns into a text field on Ctrl+click, an
// input field is clicked and its text selected with Ctrl+A; then the value and Enter. Each
// input is seen by its own frames, as in click(): fixed sleeps between them lost the click
// (and so the value) on a loaded machine (web_page_chinese waited out an error for TP 3).
// `beforeEnter` runs with the value typed and the field still being edited.
export async function typeValue(page, label, value, { beforeEnter = async () => {} } = {}) {
  await scrollIntoView(page, label);
  const { rect } = await widgetCenter(page, label);
  const { x, y } = await settledCenter(page, label);
  const slider = rect.kind === 'slider';
  const step = async (send) => {
    const frames = await frameCount(page);
    await send();
    await inputSeen(page, frames);
  };
  await step(async () => {
    await page.mouse.move(x + 1, y);
    await page.mouse.move(x, y);
  });
  if (slider) await step(() => page.keyboard.down('Control'));
  await step(() => page.mouse.down());
  await step(() => page.mouse.up());
  if (slider) await step(() => page.keyboard.up('Control'));
  if (!slider) await step(() => page.keyboard.press('Control+A'));
  await step(() => page.keyboard.type(String(value), { delay: 20 }));
  await beforeEnter();
  await step(() => page.keyboard.press('Enter'));
  await moveMouseAway(page);
}

// Puts text on the system clipboard, then Ctrl+V into the labelled box (the browser's paste
// event carries it to ImGui).
export async function pasteInto(page, label, text) {
  await click(page, label);
  await page.evaluate((value) => navigator.clipboard.writeText(value), text);
  await page.keyboard.press('Control+A');
  const since = await frameCount(page);
  await page.keyboard.press('Control+V');
  await afterInput(page, since, { idle: false });  // the box keeps its cursor blinking
}

// The top bar's widgets `names` are all there, none overlaps another, all fit the width.
export async function checkTopBar(page, when, names) {
  const overlap = (a, b) => a.x < b.x + b.width && b.x < a.x + a.width &&
                            a.y < b.y + b.height && b.y < a.y + a.height;
  const rects = await page.evaluate(() => window.megamem.inputRects());
  const missing = names.filter((name) => !rects[name]);
  check(missing.length === 0, `${when}: the top bar shows ${names.join(', ')} ${missing.join(' ')}`);
  let clash = '';
  for (let i = 0; i < names.length; i += 1) {
    for (let j = i + 1; j < names.length; j += 1) {
      if (rects[names[i]] && rects[names[j]] && overlap(rects[names[i]], rects[names[j]])) {
        clash += ` ${names[i]}/${names[j]}`;
      }
    }
  }
  check(clash === '', `${when}: nothing in the top bar hides another${clash}`);
  const width = page.viewportSize().width * (await page.evaluate(() => window.megamem.pixelRatio));
  const right = Math.max(...names.filter((n) => rects[n]).map((n) => rects[n].x + rects[n].width));
  check(right <= width, `${when}: the top bar fits the width (${right.toFixed(0)} <= ${width})`);
}

// Keeps tooltips out of screenshots.
export async function moveMouseAway(page) {
  const viewport = page.viewportSize();
  await page.mouse.move(viewport.width - 2, viewport.height - 2);
}

// The CLI's JSON for a share link, with links pointing at the same page.
export function cliEstimateForLink(cli, link, baseUrl) {
  const stdout = execFileSync(cli, ['estimate', '--url', link, '--base-url', baseUrl, '--json'],
                              { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 28 });
  return JSON.parse(stdout);
}

export function cliJson(cli, args) {
  return JSON.parse(execFileSync(cli, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 28 }));
}

// First differing path between two JSON values ("" when equal).
export function firstDifference(a, b, path = '') {
  if (typeof a !== typeof b || Array.isArray(a) !== Array.isArray(b) || (a === null) !== (b === null)) {
    return `${path || '/'}: ${JSON.stringify(a)?.slice(0, 80)} vs ${JSON.stringify(b)?.slice(0, 80)}`;
  }
  if (a !== null && typeof a === 'object') {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const key of keys) {
      const difference = firstDifference(a[key], b[key], `${path}/${key}`);
      if (difference) return difference;
    }
    return '';
  }
  return a === b ? '' : `${path}: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`;
}
