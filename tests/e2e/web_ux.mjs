// Browser end-to-end test of the paths that must never mislead (issue 16):
//
//   presets     every model preset picked from the default page (picker, type, Enter) lands on
//               a valid layout of that model on the same GPUs
//   invalid     an invalid shared link (DeepSeek-V3 at PP 16) opens with the error, the core's
//               suggestions as {label, url} and the planner; the top bar says "invalid", never
//               another configuration's numbers; one click on the first suggestion reaches a
//               valid uneven pipeline at PP 16
//   edit        an invalid edit (TP 3): the top bar speaks of the current inputs only; the
//               suggestions show beside the field that is wrong
//   layout      at 1280 x 720 and on a phone the top bar's items stay inside the width and
//               do not overlap, with invalid settings too (screenshots)
// Exit 77 (ctest: skipped) when the site is not built.
//
// usage: node web_ux.mjs --site DIR --cli PATH --artifacts DIR
import { join } from 'node:path';

import {
  check, click, finish, launch, moveMouseAway, openPage, options, pageState, serve, typeValue,
  waitForState,
} from './harness.mjs';

const opts = options();
const { server, url: baseUrl } = await serve(opts.site);
const shot = (page, name) => page.screenshot({ path: join(opts.artifacts, `ux-${name}.png`) });
const overlap = (a, b) => a.x < b.x + b.width && b.x < a.x + a.width &&
                          a.y < b.y + b.height && b.y < a.y + a.height;
const presets = JSON.parse((await import('node:child_process'))
  .execFileSync(opts.cli, ['presets', '--json'], { encoding: 'utf8' }));

// The top bar's items inside the viewport and apart from each other.
async function checkTopBar(page, when) {
  const { rects, pixelRatio } = await page.evaluate(
      () => ({ rects: window.megamem.inputRects(), pixelRatio: window.megamem.pixelRatio }));
  const names = ['top model', 'top GPUs', 'top GPU', 'recipes', 'verdict', 'top fix', 'Copy link',
                 'theme'].filter((name) => rects[name]);
  let clash = '';
  for (let i = 0; i < names.length; i += 1) {
    for (let j = i + 1; j < names.length; j += 1) {
      if (overlap(rects[names[i]], rects[names[j]])) clash += ` ${names[i]}/${names[j]}`;
    }
  }
  const width = page.viewportSize().width * pixelRatio;
  const right = Math.max(...names.map((n) => rects[n].x + rects[n].width));
  check(clash === '' && right <= width && rects['Copy link'],
        `${when}: top bar items apart and inside the width (${names.join(', ')}; right edge ` +
        `${right.toFixed(0)} <= ${width}${clash ? `; overlap:${clash}` : ''})`);
}

// Opens the model picker, types the preset's id and presses Enter.
async function pickModel(page, id) {
  await click(page, 'top model');
  await page.waitForTimeout(100);
  await page.keyboard.type(id, { delay: 10 });
  await page.keyboard.press('Enter');
}

const desktop = await launch(opts);
const { page, errors } = desktop;
try {
  // --- presets: every model picked from the default page ------------------------------------
  for (const model of presets.models) {
    // A fresh tab per model: a dozen WebGL pages in one tab exhaust software rendering.
    const tab = await desktop.context.newPage();
    await openPage(tab, baseUrl);
    const before = await pageState(tab);
    await pickModel(tab, model.id);
    let state;
    try {
      state = await waitForState(tab, (s) => s.model_id === model.id && s.result &&
                                 s.result.link === s.url, `${model.id} to be picked`);
    } catch (error) {
      state = await pageState(tab);
    }
    await tab.close();
    check(state.model_id === model.id && state.error === null &&
          state.world_size === before.world_size,
          `picking ${model.id}: a valid layout on ${state.world_size} GPUs ` +
          `(${state.error ? `error ${state.error.message}` : state.layout_note || 'layout kept'})`);
  }

  // --- invalid: a shared link with DeepSeek-V3 at PP 16 -------------------------------------
  const link = `${baseUrl}?v=1&model=deepseek-v3&gpu=h800&gpus=256&pp=16&ep=8`;
  await openPage(page, link);
  const invalid = await pageState(page);
  const rects = await page.evaluate(() => window.megamem.inputRects());
  await moveMouseAway(page);
  await shot(page, 'invalid-link-1440x900');
  check(invalid.error && invalid.error.field === 'num_layers',
        `the invalid link shows its error: ${JSON.stringify(invalid.error)}`);
  check(invalid.suggestions.length > 0 &&
        invalid.suggestions.every((s) => typeof s.label === 'string' &&
                                         s.url.startsWith(`${baseUrl}?v=1&`)),
        `suggestions as {label, url}: ${invalid.suggestions.map((s) => s.label).join(' | ')}`);
  check(/^invalid - /.test(invalid.verdict) && !/GiB/.test(invalid.verdict),
        `the top bar speaks of these inputs only: "${invalid.verdict}"`);
  check(rects['plan search'] !== undefined, 'the planner is on the page');
  const first = invalid.suggestions[0];
  await click(page, `results suggestion ${first.label}`);
  const fixed = await waitForState(page, (s) => s.error === null && s.result, 'the fix to apply');
  const p = fixed.config.parallel;
  check(p.pipeline_model_parallel_size === 16 &&
        (p.decoder_first_pipeline_num_layers > 0 || p.pipeline_model_parallel_layout !== ''),
        `one click on "${first.label}" gives a valid uneven split at PP 16 (first ` +
        `${p.decoder_first_pipeline_num_layers}, last ${p.decoder_last_pipeline_num_layers}, ` +
        `layout "${p.pipeline_model_parallel_layout}")`);
  check(fixed.url === first.url, `the page is at the suggestion's link: ${fixed.url}`);

  // --- edit: TP 3 on the default page --------------------------------------------------------
  await page.setViewportSize({ width: 1280, height: 720 });
  await openPage(page, baseUrl);
  await checkTopBar(page, '1280 x 720, valid');
  await typeValue(page, 'TP', 3);
  const edited = await waitForState(page, (s) => s.error !== null, 'an error for TP 3');
  await page.waitForTimeout(150);
  await shot(page, 'invalid-tp3-1280x720');
  check(/^invalid - /.test(edited.verdict) && !/GiB/.test(edited.verdict),
        `after an invalid edit the top bar says "${edited.verdict}"`);
  const editRects = await page.evaluate(() => window.megamem.inputRects());
  const beside = edited.suggestions.filter((s) => editRects[`suggestion ${s.label}`]);
  check(beside.length === edited.suggestions.length,
        `every suggestion is shown in the settings column (${beside.length} of ` +
        `${edited.suggestions.length})`);
  const tpRow = editRects.TP;
  const firstChip = editRects[`suggestion ${edited.suggestions[0].label}`];
  check(tpRow && firstChip && firstChip.y > tpRow.y && firstChip.y - tpRow.y < tpRow.height * 6,
        'the suggestions sit under the TP row (the field that is wrong)');
  await checkTopBar(page, '1280 x 720, invalid');

  // --- layout: a phone with invalid settings -------------------------------------------------
  await desktop.close();
  const phone = await launch(opts, { viewport: { width: 390, height: 844 }, deviceScaleFactor: 3,
                                     isMobile: true, hasTouch: true });
  try {
    await openPage(phone.page, link);
    const state = await pageState(phone.page);
    await shot(phone.page, 'invalid-link-phone');
    check(/^invalid - /.test(state.verdict), `phone: the verdict says "${state.verdict}"`);
    await checkTopBar(phone.page, 'phone, invalid');
    check(phone.errors.length === 0, `phone: no errors in the console ${phone.errors.join(' | ')}`);
  } finally {
    await phone.close();
  }
  check(errors.length === 0, `no errors in the page console ${errors.join(' | ')}`);
} catch (error) {
  check(false, `${error.stack ?? error}`);
  await shot(page, 'failure').catch(() => {});
} finally {
  await desktop.close().catch(() => {});
  server.close();
}
finish('web_ux');
