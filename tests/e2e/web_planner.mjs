// Browser end-to-end test of the layout planner panel, against `megamem plan --json`:
//
//   search      "Find the fastest layouts that fit" on the page's configuration gives the same
//               candidates, Pareto front, statistics and rejections as the CLI for its link
//   apply       clicking a row applies the layout: the link is the row's, the calculator's
//               result equals `megamem estimate --url` of it and its peak is the row's
//   pareto      the Pareto view lists the front; a row of it applies too, and so does a
//               point of the chart
//   stale       an edit outside the layout (global batch) marks the list stale and its rows
//               stop applying; the margin too; searching again matches the CLI with it
//   margin      a negative margin gives an error naming margin_gib
//   invalid     with an invalid layout (TP 7) the planner still searches, and a row applies
//               a valid layout
//   reference   at 1280 x 720 and on a phone (390 x 844): above the rows, the configuration
//               being edited with the top bar's peak and its step time, or why it does not run;
//               each row's change from it in GiB and %; no two rows with the same GiB and
//               seconds (the others folded into the first, counted); no cell cut off
//   slices      a search of over 100,000 candidates (DeepSeek-V3 on 1,024 H100) runs a slice
//               a frame: the progress bar shows its counts, the page's own work per frame
//               stays within 33 ms (30 fps; the browser's rate with software WebGL is
//               reported), Cancel drops it ("cancelled", the earlier list kept), an edit of
//               the GPU count mid-search restarts it (for 64 GPUs: a search that ends in
//               minutes under load), and the result equals the CLI's
//   empty       a search where nothing fits still shows the current configuration; a link
//               without a global batch is planned for one no candidate is invalid for
// Exit 77 (ctest: skipped) when the site is not built.
//
// usage: node web_planner.mjs --site DIR --cli PATH --artifacts DIR
import { join } from 'node:path';

import {
  check, cliEstimateForLink, cliJson, click, finish, firstDifference, lastClickTrace, launch,
  moveMouseAway, openPage, options, pageState, redraw, scrollIntoView, serve, typeValue, waitForIdle,
  waitForState,
} from './harness.mjs';

const opts = options();
const { server, url: baseUrl } = await serve(opts.site);
const shot = (page, name) => page.screenshot({ path: join(opts.artifacts, name) });

// The CLI's plan for a link with the panel's options; search_seconds differs by nature.
function cliPlan(url, planner) {
  const args = ['plan', '--url', url, '--json', '--margin-gib', String(planner.margin_gib)];
  if (!planner.search_recompute) args.push('--no-recompute-search');
  if (!planner.search_offload) args.push('--no-offload-search');
  return cliJson(opts.cli, args);
}
// Without the search's time, and without the configuration the CLI compares its rows with
// (the page reports the line it draws instead: state().planner.shown_reference).
function withoutTime(result) {
  const copy = structuredClone(result);
  delete copy.search_seconds;
  delete copy.current;
  for (const c of [...copy.top, ...copy.pareto]) delete c.change_from_current;
  return copy;
}
const searchDone = (page, what, timeoutMs = 600_000) =>
  waitForState(page, (s) => s.planner.status === 'done' && !s.planner.stale, what, timeoutMs);

async function search(page, what) {
  await click(page, 'plan search');
  const trace = lastClickTrace();
  await moveMouseAway(page);
  try {
    return await searchDone(page, what);
  } catch (error) {
    throw new Error(`${error.message}; ${trace}`);
  }
}

// The planner's search for the page's link equals the CLI's.
function checkMatchesCli(state, what) {
  const cli = cliPlan(state.url, state.planner);
  const difference = firstDifference(withoutTime(state.planner.result), withoutTime(cli));
  check(difference === '', `${what}: the page's plan equals \`megamem plan --url ... --json\`` +
        (difference ? ` (first difference ${difference})` : ` (${cli.top.length} top, ` +
         `${cli.pareto.length} on the Pareto front, ${cli.stats.candidates} candidates)`));
}

// Clicking row `index` of the shown list applies it.
async function applyRow(page, index, queries, what) {
  await click(page, `plan row ${index}`);
  await moveMouseAway(page);
  const state = await waitForState(page, (s) => s.query === queries[index], `${what} applied`);
  const candidate = (state.planner.view === 'pareto' ? state.planner.result.pareto
                                                     : state.planner.result.top)[index];
  const cli = cliEstimateForLink(opts.cli, state.url, baseUrl);
  check(firstDifference(state.result, cli) === '',
        `${what}: the calculator's result equals \`megamem estimate --url\` of the row's link`);
  const limiting = state.result.ranks[state.result.limiting_pp_rank];
  check(limiting.peak_total_bytes === candidate.peak_total_bytes &&
        state.config.parallel.tensor_model_parallel_size === candidate.tensor_parallel &&
        state.config.parallel.pipeline_model_parallel_size === candidate.pipeline_parallel &&
        state.config.training.micro_batch_size === candidate.micro_batch_size,
        `${what}: ${candidate.label} shows ${limiting.peak_total_bytes} B on the limiting rank, ` +
        `the row's ${candidate.peak_total_bytes} B`);
  check(!state.planner.stale && state.error === null,
        `${what}: the search stays current and the layout is valid`);
  return state;
}

const desktop = await launch(opts);
const { page, errors } = desktop;
try {
  // --- search --------------------------------------------------------------------------------
  await openPage(page, baseUrl);
  let state = await pageState(page);
  check(state.planner.status === 'idle' && state.planner.result === null,
        'the planner waits for a click (no search on load)');
  await scrollIntoView(page, 'plan search');
  await shot(page, 'planner-idle.png');
  await click(page, 'plan search');
  // Once the click's frames are drawn the page says the search is under way (or, on a fast
  // machine, done); waited for on the page's state, never on a sleep.
  const during = await waitForState(page, (s) => s.planner.status !== 'idle',
                                    'the click to start the search').catch(() => null);
  check(during !== null &&
        (during.planner.status === 'searching' || during.planner.status === 'done'),
        `after the click the planner is ${during ? during.planner.status : 'still idle'}`);
  await moveMouseAway(page);
  state = await searchDone(page, 'the first search');
  check(state.planner.result.top.length > 0,
        `${state.planner.result.top.length} layouts fit for ${state.config.model.name} on ` +
        `${state.world_size} GPUs, searched in ${state.planner.search_ms.toFixed(0)} ms`);
  checkMatchesCli(state, state.config.model.name);
  await scrollIntoView(page, 'plan row 0');
  await moveMouseAway(page);
  await shot(page, 'planner-fastest.png');

  // --- apply -----------------------------------------------------------------------------------
  const searchedUrl = state.url;
  state = await applyRow(page, 0, state.planner.top_queries, 'fastest row 1');
  checkMatchesCli({ ...state, url: searchedUrl }, 'after applying, the list');

  // --- pareto ------------------------------------------------------------------------------------
  await click(page, 'plan pareto');
  state = await waitForState(page, (s) => s.planner.view === 'pareto', 'the Pareto view');
  const front = state.planner.result.pareto;
  check(front.length > 1 && front.every((c, i) => i === 0 ||
        (c.step_time_s >= front[i - 1].step_time_s &&
         c.peak_total_bytes < front[i - 1].peak_total_bytes)),
        `the Pareto front lists ${front.length} layouts, each slower and smaller than the one before`);
  const paretoRow = Math.min(2, front.length - 1);
  await scrollIntoView(page, `plan row ${paretoRow}`);
  await moveMouseAway(page);
  await shot(page, 'planner-pareto.png');
  state = await applyRow(page, paretoRow, state.planner.pareto_queries, `Pareto row ${paretoRow + 1}`);
  const last = front.length - 1;
  await click(page, `plan point ${last}`);
  await moveMouseAway(page);
  state = await waitForState(page, (s) => s.query === state.planner.pareto_queries[last],
                             'the chart point applied');
  check(state.result.ranks[state.result.limiting_pp_rank].peak_total_bytes ===
        front[last].peak_total_bytes,
        `clicking the chart's least-memory point applies ${front[last].label}`);
  await click(page, 'plan fastest');

  // --- stale -------------------------------------------------------------------------------------
  const gbs = state.config.training.global_batch_size;
  await typeValue(page, 'global batch', gbs * 2);
  state = await waitForState(page, (s) => s.config.training.global_batch_size === gbs * 2,
                             'the global batch edit');
  check(state.planner.stale, 'a global-batch edit marks the search stale');
  const before = state.query;
  await click(page, 'plan row 0');  // waits for the frames that see the click
  await moveMouseAway(page);
  await waitForIdle(page);
  state = await pageState(page);
  check(state.query === before, 'a row of a stale search does not apply');
  await scrollIntoView(page, 'plan row 0');
  await shot(page, 'planner-stale.png');
  await typeValue(page, 'plan margin', 6);
  state = await waitForState(page, (s) => s.planner.margin_gib === 6, 'the margin edit');
  state = await search(page, 'the search with gbs x2 and a 6 GiB margin');
  checkMatchesCli(state, `gbs ${gbs * 2}, margin 6 GiB`);
  check(state.planner.result.top.every((c) => c.peak_total_bytes <=
                                             (state.planner.result.capacity_gib - 6) * 2 ** 30),
        'every listed layout fits under capacity - margin');

  // A margin the search cannot use is named, not clamped.
  await typeValue(page, 'plan margin', -1);
  await click(page, 'plan search');
  state = await waitForState(page, (s) => s.planner.status === 'error', 'the margin error');
  check(state.planner.error.field === 'margin_gib',
        `a margin of -1 GiB: ${state.planner.error.field}: ${state.planner.error.message}`);
  await typeValue(page, 'plan margin', 2);

  // --- invalid -------------------------------------------------------------------------------------
  await typeValue(page, 'TP', 7);
  state = await waitForState(page, (s) => s.error !== null, 'TP 7 refused');
  await click(page, 'plan search recompute');
  state = await waitForState(page, (s) => !s.planner.search_recompute, 'recompute search off');
  check(state.planner.stale, 'turning the recompute search off marks the search stale');
  state = await search(page, 'the search from an invalid layout');
  checkMatchesCli(state, 'TP 7 in the calculator, recompute not searched');
  state = await applyRow(page, 0, state.planner.top_queries, 'a row from an invalid layout');
  check(state.error === null, 'the applied layout clears the error');
} catch (error) {
  check(false, `planner interactions: ${error.stack ?? error}`);
  await shot(page, 'planner-failure.png').catch(() => {});
}

// --- reference -------------------------------------------------------------------------------
// DeepSeek-V3 with PP 16 does not run (61 layers), and its list has layouts that differ only
// in what does not change their memory or time (selective recompute of mla_up_proj with or
// without mlp): the reference says why, and those rows are folded into one.
const referenceLink = `${baseUrl}?v=1&model=deepseek-v3&gpu=h800&gpus=256&pp=16&ep=16&gbs=256`;
const gibText = (bytes) => `${(bytes / 2 ** 30).toFixed(2)} GiB`;

// The rows as drawn ("index|peak|peak change|step|step change|folded"): none reads like
// another, each layout of the list reads like a drawn row, the folded ones are counted, and no
// text of the planner is cut off without a way to read it.
function shownRows(state) {
  return state.planner.shown_rows.map((text) => {
    const [index, peak, peakChange, step, stepChange, alike] = text.split('|');
    return { index: Number(index), peak, peakChange, step, stepChange, alike: Number(alike) };
  });
}
function checkRows(state, what) {
  const rows = shownRows(state);
  const top = state.planner.result.top;
  const keyOf = (c) => `${gibText(c.peak_total_bytes)} ${c.step_time_s.toFixed(3)} s`;
  const keys = rows.map((r) => `${r.peak} ${r.step}`);
  check(rows.length > 0 && new Set(keys).size === rows.length,
        `${what}: no two rows with the same GiB and seconds (${keys.join('; ')})`);
  check(rows.every((r) => keyOf(top[r.index]) === `${r.peak} ${r.step}`) &&
        top.every((c) => keys.includes(keyOf(c))) &&
        rows.reduce((n, r) => n + 1 + r.alike, 0) === top.length,
        `${what}: each of the ${top.length} layouts is one of the ${rows.length} rows or counted ` +
        `in one that reads the same (${rows.map((r) => r.alike).join(', ')} folded)`);
  const cut = state.clipped_text.filter((c) => c.where.startsWith('planner') && !c.readable);
  check(cut.length === 0, `${what}: no planner text cut off` + (cut.length ? `; cut off: ` +
        cut.map((c) => `${c.where} "${c.text}" (${c.needed_px.toFixed(0)} in ` +
                       `${c.room_px.toFixed(0)} px)`).join('; ') : ''));
}

async function referenceAndRows(size, contextOptions) {
  const browser = await launch(opts, contextOptions);
  const view = browser.page;
  try {
    await openPage(view, referenceLink);
    await click(view, 'plan search');
    await moveMouseAway(view);
    let state = await searchDone(view, `${size}: the DeepSeek-V3 search`);
    await scrollIntoView(view, 'plan row 0');
    await moveMouseAway(view);
    await redraw(view);  // the clipped texts are of the last frame drawn
    state = await pageState(view);
    const line = state.planner.shown_reference;
    check(state.error !== null && line.includes('TP1 PP16 VPP1 CP1 EP16 ETP1') &&
          line.includes('does not run') && line.includes(state.error.field),
          `${size}: above the rows, why the configuration does not run: "${line}" (the page's ` +
          `error: ${state.error?.field})`);
    check(state.planner.shown_rows.length < state.planner.result.top.length,
          `${size}: rows that read the same are folded (${state.planner.shown_rows.length} ` +
          `rows for ${state.planner.result.top.length} layouts)`);
    checkRows(state, `${size}, configuration refused`);
    await view.screenshot({ path: join(opts.artifacts, `planner-reference-${size}-refused.png`) });

    // The first row applied: the reference is that configuration, with the top bar's peak and
    // the CLI's step time for its link.
    await click(view, 'plan row 0');
    await moveMouseAway(view);
    state = await waitForState(view, (s) => s.query === s.planner.top_queries[0] &&
                                            s.error === null, `${size}: row 1 applied`);
    await scrollIntoView(view, 'plan row 0');
    await moveMouseAway(view);
    await redraw(view);
    state = await pageState(view);
    const cli = cliPlan(state.url, state.planner);
    const topBar = state.result.ranks[state.result.limiting_pp_rank].peak_total_bytes;
    const applied = state.planner.shown_reference;
    check(cli.current.peak_total_bytes === topBar && applied.includes(gibText(topBar)) &&
          applied.includes(`${cli.current.step_time_s.toFixed(3)} s`),
          `${size}: above the rows, the configuration with the top bar's ${gibText(topBar)} and ` +
          `its step time (\`megamem plan --url\`: ${cli.current.step_time_s.toFixed(3)} s): ` +
          `"${applied}"`);
    const rows = shownRows(state);
    const near = (text, value, within) => Math.abs(parseFloat(text) - value) <= within;
    check(rows.every((r) => /^([+-]\d+\.\d\d|0\.00) GiB$/.test(r.peakChange) &&
                            /^([+-]\d+\.\d|0\.0) %$/.test(r.stepChange)) &&
          rows.every((r) => {
            const change = cli.top[r.index].change_from_current;
            return near(r.peakChange, change.peak_bytes / 2 ** 30, 0.006) &&
                   near(r.stepChange, 100 * change.step_time_fraction, 0.06);
          }) && rows[0].index === 0 && rows[0].peakChange === '0.00 GiB' &&
          rows[0].stepChange === '0.0 %',
          `${size}: each row shows its change from it, as the CLI's change_from_current ` +
          `(${rows.map((r) => `${r.peakChange}, ${r.stepChange}`).join('; ')})`);
    checkRows(state, `${size}, row 1 applied`);
    await view.screenshot({ path: join(opts.artifacts, `planner-reference-${size}-applied.png`) });
    check(browser.errors.length === 0, `${size}: no console errors ${browser.errors.join(' | ')}`);
  } catch (error) {
    check(false, `planner reference, ${size}: ${error.stack ?? error}`);
    await view.screenshot({ path: join(opts.artifacts, `planner-reference-${size}-failure.png`) })
      .catch(() => {});
  } finally {
    await browser.close().catch(() => {});
  }
}

await referenceAndRows('1280 x 720', { viewport: { width: 1280, height: 720 } });
await referenceAndRows('phone', { viewport: { width: 390, height: 844 }, deviceScaleFactor: 3,
                                  isMobile: true, hasTouch: true });

// --- empty ----------------------------------------------------------------------------------
// Issue #28: the line with the current configuration showed only above fitting rows; a search
// where nothing fits (Llama-3-70B on one H100) still says what the user has. A link without a
// global batch is planned for one every layout divides: no candidate is invalid for it (the
// current layout's mbs x DP left 1,360 of 7,140 invalid).
async function emptySearchAndProposedBatch() {
  const browser = await launch(opts);
  const view = browser.page;
  try {
    await openPage(view, `${baseUrl}?v=1&model=llama-3-70b&gpu=h100-80gb&gpus=1&gbs=8`);
    await scrollIntoView(view, 'plan search');
    let state = await search(view, 'the search on one GPU');
    check(state.planner.result.top.length === 0 &&
          /^current: TP1 PP1 VPP1 CP1 EP1 ETP1, \d+\.\d\d GiB \(does not fit\), step \d/
            .test(state.planner.shown_reference),
          `nothing fits: the current configuration is still shown ("${state.planner.shown_reference}")`);
    await view.screenshot({ path: join(opts.artifacts, 'planner-nothing-fits.png') });

    await openPage(view, `${baseUrl}?v=1&model=llama-3-70b&gpu=h100-80gb&gpus=64&tp=8&pp=4`);
    await scrollIntoView(view, 'plan search');
    state = await search(view, 'the search without a global batch');
    const { stats } = state.planner.result;
    check(state.planner.result.global_batch_size === 512 && stats.invalid === 0 && stats.fitting > 0,
          `no global batch: planned for ${state.planner.result.global_batch_size}, ` +
          `${stats.invalid} of ${stats.candidates} candidates invalid`);
    checkMatchesCli(state, 'no global batch');
    // The line above the rows is priced at that batch too, as `megamem plan` prices its current.
    const { current } = cliPlan(state.url, state.planner);
    check(state.planner.shown_reference.includes(gibText(current.peak_total_bytes)) &&
          current.peak_total_bytes > state.result.ranks[state.result.limiting_pp_rank].peak_total_bytes,
          `no global batch: the current line has the peak at the planned batch ` +
          `(${gibText(current.peak_total_bytes)}): "${state.planner.shown_reference}"`);
    check(browser.errors.length === 0, `empty search: no console errors ${browser.errors.join(' | ')}`);
  } catch (error) {
    check(false, `empty search: ${error.stack ?? error}`);
  } finally {
    await browser.close().catch(() => {});
  }
}
await emptySearchAndProposedBatch();

// --- slices ----------------------------------------------------------------------------------
// The page's frames while a search runs: its own work per frame (UI + the search's slice, the
// smoothed frame time; worst since the last state()) and the frames the browser drew.
// Over a count of frames, not a time: 3 s are more frames the quicker the machine, and the
// search ends after a count of frames (about 150 for 1,024 GPUs here, some 6,000 candidates a
// frame), so at 50 fps the 3 s could take all of it and leave nothing for Cancel.
async function framesDuring(page, count) {
  await pageState(page);  // resets the worst frame time
  const before = await page.evaluate(() => ({ frames: window.megamem.frames(), t: performance.now() }));
  await page.waitForFunction((n) => window.megamem.frames() >= n, before.frames + count,
                             { timeout: 60_000 });
  const after = await page.evaluate(() => ({ frames: window.megamem.frames(), t: performance.now() }));
  const state = await pageState(page);
  return { state, fps: (after.frames - before.frames) / ((after.t - before.t) / 1000) };
}

const searching = (page, what) => waitForState(
  page, (s) => s.planner.status === 'searching' && s.planner.progress.candidates_done > 0, what,
  60_000);

try {
  const link = `${baseUrl}?v=1&model=deepseek-v3&gpu=h100-80gb&gpus=1024&gbs=8192&seq=4096`;
  await openPage(page, link);
  await scrollIntoView(page, 'plan search');
  // The page's own frame time without a search (the frames of the scroll), for comparison.
  const idleFrameMs = (await pageState(page)).timings_ms.frame;
  await click(page, 'plan search');
  await moveMouseAway(page);
  let state = await searching(page, 'the DeepSeek-V3 search under way');
  const p = state.planner.progress;
  check(p.candidates_total >= 100_000 && p.candidates_done < p.candidates_total &&
        p.layouts_total > 0, `the search is under way: ${p.candidates_done} of ` +
        `${p.candidates_total} candidates (${p.layouts_done} of ${p.layouts_total} layouts)`);
  const bar = await page.evaluate(() => window.megamem.inputRects()['plan progress']);
  const cancel = await page.evaluate(() => window.megamem.inputRects()['plan cancel']);
  check(bar && bar.width > 100 && cancel, 'the progress bar and Cancel are on screen');
  await shot(page, 'planner-progress.png');
  const { state: during, fps } = await framesDuring(page, 20);
  const t = during.timings_ms;
  const progress = during.planner.progress;
  const meanSlice = progress.work_ms / progress.frames;
  const slice = progress.low_decile_slice_ms;
  // What the page decides is the search's share of a frame: its slice, 8 ms and one step
  // over. The slice is the low decile of the frames': a slice the scheduler interrupts takes
  // longer on the clock for work the page did not do, which moved the mean to 12.4 ms beside
  // one CPU burner and the median to 13.0 ms with a second browser test running too; the
  // slices no process interrupted still show the budget (a search that ignored it would have
  // no such slices). The frame time as a whole is reported, not checked: on a loaded machine
  // the clock runs on while other processes have the cores (44 ms a frame beside three CPU
  // burners, 5.7 ms before the search on a quieter moment), which says nothing of the page;
  // the message reports it (10.0 ms, 2.9 ms without a search, in the CI run of e2265bf).
  check(during.planner.status === 'searching' && slice > 0 && slice <= 12 && fps > 0,
        `while searching, the page needs ${t.frame.toFixed(1)} ms per frame on average (worst ` +
        `${t.frame_worst.toFixed(1)} ms; ${idleFrameMs.toFixed(1)} ms without a search), of it ` +
        `the search's slice ${slice.toFixed(1)} ms (low decile; median ` +
        `${progress.median_slice_ms.toFixed(1)}, mean ${meanSlice.toFixed(1)} ms); the browser ` +
        `drew ${fps.toFixed(1)} frames per second with software WebGL`);

  // Cancel: nothing searched before on this page, so no list, and the status says so. Says
  // what happened when the click did not cancel (one run in five under load waited 60 s for
  // 'cancelled'): how far the search was before the click, and where it is now.
  const beforeCancel = (await pageState(page)).planner.progress;
  await click(page, 'plan cancel');
  const cancelTrace = lastClickTrace();
  await moveMouseAway(page);
  // Until it stops, or 200 frames after it was seen: a click the page took acts in the next.
  state = await waitForState(
      page, (s) => s.planner.status !== 'searching' ||
                   s.planner.progress.frames > beforeCancel.frames + 200,
      'the search to stop after Cancel', 120_000);
  check(state.planner.status === 'cancelled' && state.planner.result === null,
        `Cancel stops the search; no list was there before it (clicked at ` +
        `${beforeCancel.candidates_done} of ${beforeCancel.candidates_total} candidates, ` +
        `${beforeCancel.frames} frames; now ${state.planner.status} after ` +
        `${state.planner.progress.frames} frames, ${state.planner.progress.work_ms.toFixed(0)} ms ` +
        `of slices, ${state.planner.search_wall_ms.toFixed(0)} ms on the clock)` +
        (state.planner.status === 'cancelled' ? '' : `; ${cancelTrace}`));
  await shot(page, 'planner-cancelled.png');

  // An edit mid-search restarts it for the new settings.
  await click(page, 'plan search');
  await moveMouseAway(page);
  const first = await searching(page, 'the search again');
  // 64 GPUs: 393,280 candidates, most ruled out by static memory, so the test ends soon.
  // While the field is being edited the page holds an ended search (advance_plan), so a search
  // under way with "64" typed is the one Enter restarts; typed without looking, the 1,024-GPU
  // search could end first, and then nothing restarted and the wait for a current 64-GPU list
  // ran to its timeout (688,000 of its 966,880 candidates were already done as the edit
  // landed in a passing run beside two CPU burners).
  let typed = null;
  await typeValue(page, 'top GPUs', 64, {
    beforeEnter: async () => { typed = await pageState(page); },
  });
  state = await waitForState(page, (s) => s.world_size === 64, 'the GPU count edit mid-search');
  // Restarted, the search ends current (not stale) for 64 GPUs, as the CLI's for that link.
  const restarted = check(
      typed.planner.status === 'searching' && state.planner.status === 'searching',
      `after the edit the search goes on (${first.planner.progress.candidates_done} ` +
      `candidates were done when seen, ${typed.planner.progress.candidates_done} with "64" ` +
      `typed, ${state.planner.progress.candidates_done} after Enter; ` +
      `${typed.planner.status}, then ${state.planner.status})`);
  if (!restarted) throw new Error('no search to restart: no 64-GPU list will come');
  state = await searchDone(page, 'the DeepSeek-V3 search on 64 GPUs');
  const stats = state.planner.result.stats;
  const done = state.planner.progress;
  check(stats.candidates >= 100_000 && stats.candidates === done.candidates_total,
        `browser: DeepSeek-V3 on 64 H100: ${stats.candidates} candidates searched in ` +
        `${done.work_ms.toFixed(0)} ms of slices over ${done.frames} frames ` +
        `(${(state.planner.search_wall_ms / 1000).toFixed(1)} s on the clock; ${stats.fitting} fit)`);
  checkMatchesCli(state, 'DeepSeek-V3 on 64 H100 (restarted mid-search from 1,024)');

  // Cancel keeps the earlier list. The cancelled search must outlast the clicks: on a loaded
  // machine the 64-GPU search (2-3 s on the clock) can end between seeing it under way and
  // the Cancel click landing, after which nothing is left to cancel (the timeout of issue 24).
  // Back on 1,024 GPUs it runs for minutes, so the click always finds it.
  const earlier = state.planner.top_queries;
  await typeValue(page, 'top GPUs', 1024);
  await waitForState(page, (s) => s.world_size === 1024, 'the GPU count back at 1,024');
  await click(page, 'plan search');
  const thirdTrace = lastClickTrace();
  await moveMouseAway(page);
  const third = await searching(page, 'a third search').catch((error) => {
    throw new Error(`${error.message}; ${thirdTrace}`);
  });
  await click(page, 'plan cancel');
  const secondCancelTrace = lastClickTrace();
  const clicked = await pageState(page);  // the frames after the release have drawn
  const focus = await page.evaluate(() => window.megamem.keyboardFocus());
  await moveMouseAway(page);
  state = await waitForState(page, (s) => s.planner.status !== 'searching', 'the second cancel');
  // Says what happened when the click did not cancel: how far the search was when seen and
  // right after the click's release, and how many frames and how much time it took to end
  // (one run under load ended 'done' after 155 frames: a missed click, or one after the end?).
  check(state.planner.status === 'cancelled',
        `the second Cancel stops the search (seen at ${third.planner.progress.candidates_done} ` +
        `of ${third.planner.progress.candidates_total} candidates, ` +
        `${third.planner.progress.frames} frames; after the click ${clicked.planner.status} at ` +
        `${clicked.planner.progress.candidates_done}, ${clicked.planner.progress.frames} frames, ` +
        `keyboard on "${focus.label}"; now ${state.planner.status} after ` +
        `${state.planner.progress.frames} frames, ${state.planner.progress.work_ms.toFixed(0)} ms ` +
        `of slices, ${state.planner.search_wall_ms.toFixed(0)} ms on the clock)` +
        (state.planner.status === 'cancelled' ? '' : `; ${secondCancelTrace}`));
  check(state.planner.result !== null &&
        JSON.stringify(state.planner.top_queries) === JSON.stringify(earlier),
        'Cancel keeps the list of the search before it');
  // The kept list is for 64 GPUs, so the panel marks it stale rather than listing its rows.
  await scrollIntoView(page, 'plan search');
  await moveMouseAway(page);
  await shot(page, 'planner-cancel-kept.png');
} catch (error) {
  check(false, `planner slices: ${error.stack ?? error}`);
  await shot(page, 'planner-slices-failure.png').catch(() => {});
}
check(errors.length === 0, `no console errors${errors.length ? `: ${errors.join(' | ')}` : ''}`);
await desktop.close();
server.close();
finish('web_planner');
