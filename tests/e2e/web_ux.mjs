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
//   model       layers is a number field (a click on it changes nothing); an edited
//               architecture field is marked and its reset restores the preset's value; run
//               settings (dropouts, vocabulary padding) do not mark the model "(edited)"; an
//               MLA model shows "—" for query groups and kv channels, with the reason
//   keyboard    Tab from the page start goes through the top bar's pickers in order; + on
//               TP 8 steps to 16 (the next size that divides), not 9
//   generated   DeepSeek-V3 picked at PP 8 x VPP 5 gets a short generated layout, which a PP
//               step derives again for the new size; + to PP 16 lowers VPP, since 61 layers
//               do not fill 16 x 5 stages (issue #28 item 2)
//   tooltips    on a phone a tap opens a tooltip, a tap elsewhere closes it, a tap on the same
//               item toggles it
// Exit 77 (ctest: skipped) when the site is not built.
//
// usage: node web_ux.mjs --site DIR --cli PATH --artifacts DIR
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

import {
  afterInput, check, click, finish, frameCount, hover, launch, moveMouseAway, navigate, openPage,
  options, pageState, pickModel, redraw, serve, tapAt, tapKey, typeValue, waitForIdle, waitForState,
  widgetCenter,
} from './harness.mjs';

const opts = options();
const { server, url: baseUrl } = await serve(opts.site);
const shot = (page, name) => page.screenshot({ path: join(opts.artifacts, `ux-${name}.png`) });
const overlap = (a, b) => a.x < b.x + b.width && b.x < a.x + a.width &&
                          a.y < b.y + b.height && b.y < a.y + a.height;
const presets = JSON.parse(execFileSync(opts.cli, ['presets', '--json'], { encoding: 'utf8' }));

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
const rectsOf = (page) => page.evaluate(() => window.megamem.inputRects());

// model: hard to change by accident.
async function modelFields(page) {
  await openPage(page, baseUrl);
  const before = await pageState(page);
  let rects = await rectsOf(page);
  check(rects.layers && rects.layers.kind === 'input', `layers is a number field (${rects.layers?.kind})`);
  await click(page, 'layers');
  await page.keyboard.press('Escape');
  const away = await frameCount(page);
  await moveMouseAway(page);
  await afterInput(page, away);
  const clicked = await pageState(page);
  check(clicked.url === before.url && clicked.config.model.num_layers === before.config.model.num_layers,
        `one click on layers changes nothing (${clicked.config.model.num_layers} layers)`);
  check(!rects['reset architecture'] && !rects['hidden reset'], 'the preset as it is: no reset');

  await typeValue(page, 'hidden', 4096);
  await waitForState(page, (s) => s.config.model.hidden_size === 4096, 'hidden 4096');
  await waitForIdle(page);
  rects = await rectsOf(page);
  check(rects['hidden reset'] && rects['reset architecture'] && !rects['layers reset'],
        'the edited field (hidden) is marked with a reset, and the architecture can be reset');
  const editedTitle = (await pageState(page)).model_title;
  check(editedTitle.endsWith(' (edited)'), `an architecture edit marks the model: "${editedTitle}"`);
  await click(page, 'hidden reset');
  const reset = await waitForState(page, (s) => s.config.model.hidden_size === before.config.model.hidden_size,
                                   'the reset to apply');
  await waitForIdle(page);
  rects = await rectsOf(page);
  check(reset.url === before.url && !rects['hidden reset'],
        `reset restores the preset's hidden size ${reset.config.model.hidden_size} (same link)`);
  // Run settings (dropouts, vocabulary padding, the position count of a RoPE model) are no
  // other model: the title stays the preset's (issue #28: they read "(edited)").
  await openPage(page, `${baseUrl}?v=1&model=llama-3-70b&gpu=h100-80gb&gpus=64&tp=8&pp=4&` +
                       'gbs=512&m.hdrop=0&m.adrop=0&m.vocab-div=256&m.max-pos=4096');
  const runSettings = await pageState(page);
  check(runSettings.config.model.hidden_dropout === 0 &&
        runSettings.config.model.make_vocab_size_divisible_by === 256 &&
        runSettings.model_title === 'Llama-3-70B',
        `run settings changed, the model is not marked edited: "${runSettings.model_title}"`);
  check(rects['query groups'].kind === 'input' && rects['q-lora rank'] === undefined ||
        rects['q-lora rank'].kind === 'not-applicable',
        'Llama-3-70B: query groups is a field; the MLA ranks do not apply');

  await openPage(page, `${baseUrl}?v=1&model=deepseek-v3&gpu=h800&gpus=256&pp=16&ep=8&pp-first=1`);
  rects = await rectsOf(page);
  check(rects['query groups']?.kind === 'not-applicable' && rects['kv channels']?.kind === 'not-applicable',
        `DeepSeek-V3 (MLA): query groups and kv channels show "—" (${rects['query groups']?.kind})`);
  await hover(page, 'query groups');
  rects = await rectsOf(page);
  check(rects['tooltip query groups'] !== undefined, 'its tooltip says why');
  await shot(page, 'mla-query-groups-tooltip');
  await moveMouseAway(page);
}

// keyboard: Tab in the visual order, +/- through sizes that divide.
async function keyboard(page) {
  await page.setViewportSize({ width: 1440, height: 900 });
  await openPage(page, baseUrl);
  const focused = [];
  for (let i = 0; i < 4; i += 1) {
    await tapKey(page, 'Tab');
    // A move to another window takes a few frames; software WebGL under load draws them slowly.
    const handle = await page.waitForFunction((last) => {
      const kind = window.megamem.inputRects()['keyboard focus']?.kind;
      return kind !== undefined && kind !== last && kind;
    }, focused.at(-1) ?? null, { timeout: 60_000 });
    focused.push(await handle.jsonValue());
  }
  // Every control is a stop (issue #28 item 8; web_keyboard.mjs goes round the whole page).
  check(focused[0] === 'top model' && focused[1] === 'top GPUs' && focused[2] === 'top GPU' &&
        focused[3] === 'recipes', `Tab from the page start: ${focused.join(' -> ')}`);
  await page.keyboard.press('Escape');

  await openPage(page, `${baseUrl}?v=1&model=llama-3-70b&gpu=h100-80gb&gpus=64&tp=8&pp=1`);
  const start = await pageState(page);
  await click(page, 'TP +');
  const stepped = await waitForState(page, (s) => s.config.parallel.tensor_model_parallel_size !== 8,
                                     'TP to step');
  check(start.config.parallel.tensor_model_parallel_size === 8 &&
        stepped.config.parallel.tensor_model_parallel_size === 16,
        `+ on TP 8 steps to ${stepped.config.parallel.tensor_model_parallel_size} (64 heads, 8 groups)`);
  await click(page, 'TP -');
  const back = await waitForState(page, (s) => s.config.parallel.tensor_model_parallel_size !== 16,
                                  'TP to step back');
  check(back.config.parallel.tensor_model_parallel_size === 8,
        `- on TP 16 steps back to ${back.config.parallel.tensor_model_parallel_size}`);
  await moveMouseAway(page);
}

// generated layout: picking DeepSeek-V3 on the default recipe's PP 8 x VPP 5 writes a short
// layout, and a PP step derives it again for the new size instead of failing on its stages.
async function generatedLayout(page) {
  await page.setViewportSize({ width: 1440, height: 900 });
  await openPage(page, baseUrl);
  await pickModel(page, 'deepseek-v3');
  const picked = await waitForState(page, (s) => s.model_id === 'deepseek-v3' && s.result &&
                                    s.result.link === s.url, 'DeepSeek-V3 to be picked');
  const generated = picked.config.parallel.pipeline_model_parallel_layout;
  check(generated !== '' && generated.length <= 40 && picked.layout_note.includes(generated),
        `the generated layout is short and named in the note: "${generated}" ` +
        `("${picked.layout_note}")`);
  await click(page, 'PP -');
  const stepped = await waitForState(
    page, (s) => s.config.parallel.pipeline_model_parallel_size !== 8 && s.error === null &&
                 s.result && s.result.link === s.url, 'PP to step with its layout');
  const p = stepped.config.parallel;
  check(p.pipeline_model_parallel_size === 4 && p.pipeline_model_parallel_layout !== '' &&
        p.pipeline_model_parallel_layout !== generated,
        `- on PP 8 steps to ${p.pipeline_model_parallel_size} with the layout derived again ` +
        `("${p.pipeline_model_parallel_layout}")`);
  // + past what 61 layers fill at VPP 5 (PP 16 x VPP 5 = 80 stages) keeps the PP and lowers
  // VPP; it did nothing before.
  for (const pp of [8, 16]) {
    await click(page, 'PP +');
    const up = await waitForState(
      page, (s) => s.config.parallel.pipeline_model_parallel_size === pp && s.error === null &&
                   s.result && s.result.link === s.url, `PP + to step to ${pp}`);
    const q = up.config.parallel;
    check(pp === 8 || (q.virtual_stages_per_pipeline_rank < 5 && up.layout_note !== ''),
          `+ steps PP to ${pp} at VPP ${q.virtual_stages_per_pipeline_rank} ` +
          `("${up.layout_note}")`);
  }
}

// layout note on a phone: a model picked in the settings view, whose layers the recipe's
// PP 8 x VPP 5 does not place, says there what the page changed (the results view that
// showed the note is hidden while the settings are shown; issue #28 item 2).
async function phonePickNote(page) {
  await openPage(page, baseUrl);
  await click(page, 'Settings');
  await waitForState(page, (s) => s.settings_shown_on_phone, 'the settings to show');
  await pickModel(page, 'deepseek-v3', 'model preset');
  const picked = await waitForState(page, (s) => s.model_id === 'deepseek-v3' &&
                                    s.layout_note !== '' && s.result && s.result.link === s.url,
                                    'DeepSeek-V3 to be picked with a layout note');
  await redraw(page);
  const { rects, pixelRatio } = await page.evaluate(
      () => ({ rects: window.megamem.inputRects(), pixelRatio: window.megamem.pixelRatio }));
  const note = rects['layout note'];
  const heightPx = page.viewportSize().height * pixelRatio;
  check(note !== undefined && note.y >= 0 && note.y + note.height <= heightPx,
        `phone: the layout note shows in the settings view where the model was picked ` +
        `(${JSON.stringify(note)}; "${picked.layout_note}")`);
  check(!/ runs on /.test(picked.layout_note),
        `the note does not say the layout "runs" beside a verdict that may say it does not fit ` +
        `("${picked.layout_note}")`);
}

// `megamem ARGS --json` of an invalid configuration: it exits 1 with {error, suggestions}.
function cliJsonOfInvalid(args) {
  try {
    execFileSync(opts.cli, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    return JSON.parse(error.stdout);
  }
  throw new Error(`megamem ${args.join(' ')} did not refuse the configuration`);
}

// tooltips on a phone: taps open and close them.
async function tapTooltips(page) {
  const tap = async (label) => {
    const { x, y } = await widgetCenter(page, label);
    await tapAt(page, x, y);
  };
  const open = async () => (await rectsOf(page))['tooltip verdict'] !== undefined;
  await tap('verdict');
  const opened = await open();
  await tapAt(page, 3, page.viewportSize().height - 3);
  const closedElsewhere = !(await open());
  await tap('verdict');
  const reopened = await open();
  await tap('verdict');
  const toggled = !(await open());
  check(opened && closedElsewhere && reopened && toggled,
        `phone: a tap opens the verdict's tooltip (${opened}), a tap elsewhere closes it ` +
        `(${closedElsewhere}), taps on it toggle it (${reopened}, ${toggled})`);
}

const desktop = await launch(opts);
const { page, errors } = desktop;
try {
  // --- presets: every model picked from the default page ------------------------------------
  // One page load; before each pick the page returns to the default link the way the browser's
  // back button does (popstate), which restores its whole configuration without reloading the
  // wasm — a fresh load per model made this the suite's longest test.
  const tab = await desktop.context.newPage();
  await openPage(tab, baseUrl);
  const defaults = await pageState(tab);
  for (const model of presets.models) {
    await navigate(tab, baseUrl);
    const before = await waitForState(tab, (s) => s.url === defaults.url && s.error === null,
                                      'the default page again');
    await pickModel(tab, model.id);
    let state;
    try {
      state = await waitForState(tab, (s) => s.model_id === model.id && s.result &&
                                 s.result.link === s.url, `${model.id} to be picked`);
    } catch (error) {
      state = await pageState(tab);
    }
    check(state.model_id === model.id && state.error === null &&
          state.world_size === before.world_size,
          `picking ${model.id}: a valid layout on ${state.world_size} GPUs ` +
          `(${state.error ? `error ${state.error.message}` : state.layout_note || 'layout kept'})`);
  }
  await tab.close();

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
  // Each fix says whether it fits, from the core's verdict, as `megamem estimate --json` says
  // it (#28 item 1).
  const cliInvalid = cliJsonOfInvalid(['estimate', '--url', link, '--json']);
  const fitsOf = (list) => JSON.stringify(list.map((s) => [s.label, s.verdict, s.headroom_bytes]));
  check(invalid.suggestions.every((s) => typeof s.verdict === 'string') &&
        fitsOf(invalid.suggestions) === fitsOf(cliInvalid.suggestions),
        `each suggestion's verdict as the CLI's: ${fitsOf(invalid.suggestions)} vs ` +
        `${fitsOf(cliInvalid.suggestions)}`);
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
  await waitForIdle(page);
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

  await modelFields(page);
  await keyboard(page);
  await generatedLayout(page);

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
    await tapTooltips(phone.page);
    await phonePickNote(phone.page);
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
