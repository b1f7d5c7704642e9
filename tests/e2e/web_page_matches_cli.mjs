// Browser end-to-end test: the web page and the native CLI give the same per-rank memory.
//
// Serves the static site on a free localhost port, opens it in headless Debian Chromium
// (software WebGL2 through SwiftShader), waits for window.megamem.ready, and checks that
//   1. the page's per-rank weight, gradient and optimizer bytes equal those of
//      `megamem estimate --megatron-args <page's flags> --world-size <n> --json`;
//   2. editing an input with mouse and keyboard (Ctrl+click a slider, type a value, Enter)
//      recomputes the estimate, which again matches the CLI;
//   3. an invalid layout shows an error naming its field and keeps the last result;
//   4. picking each model preset of issue 14 (Qwen3-Next, Nemotron-H, GLM-4.5, gpt-oss,
//      Qwen3-Coder) from the picker (type its id, Enter) gives exactly the estimate
//      `megamem estimate --url <the page's link> --json` prints, and the hybrid, Gated DeltaNet
//      and sliding-window models show their own input rows.
// Screenshots go to the artifacts folder. Exit 77 (ctest: skipped) when the site is not built.
//
// usage: node web_page_matches_cli.mjs --site DIR --cli PATH --artifacts DIR
import { join } from 'node:path';

import {
  check, cliEstimateForLink, cliJson, finish, firstDifference, launch, openPage, options,
  pageState, pickModel, serve, typeValue, waitForIdle, waitForState,
} from './harness.mjs';

const opts = options();
const { server, url } = await serve(opts.site);

// The CLI, run on the page's own Megatron flags.
const cliEstimate = (state) => cliJson(opts.cli, [
  'estimate', '--megatron-args', state.megatron_args, '--world-size', String(state.world_size),
  '--json',
]);

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

// The input rows a model's own layers bring (registry labels), by preset.
const ownRows = {
  'nemotron-nano-9b-v2': ['hybrid layer pattern', 'Mamba heads', 'Mamba state dim'],
  'qwen3-next-80b-a3b': ['linear attention freq', 'GDN key heads', 'GDN value heads'],
  'gpt-oss-120b': ['softmax type', 'sliding window', 'full attention every'],
};

// Picks a model preset from the top bar's picker (type its id, Enter) and checks the page's
// estimate against the CLI's for the link the page then shows.
async function checkPickedPreset(target, model) {
  try {
    await pickModel(target, model.id);
    const state = await waitForState(target, (s) => s.model_id === model.id && s.result !== null &&
                                     s.result.link === s.url, `${model.id} to be picked`, 30_000);
    const difference = firstDifference(state.result, cliEstimateForLink(opts.cli, state.url, url));
    check(state.error === null && difference === '',
          `picked ${model.id}: page result = CLI --url --json for ${state.url}` +
          (difference ? ` (first difference ${difference})` : ''));
    const rects = await target.evaluate(() => window.megamem.inputRects());
    for (const label of ownRows[model.id] ?? []) {
      check(rects[label] !== undefined, `picked ${model.id}: the '${label}' row is on the page`);
    }
  } catch (error) {
    check(false, `picking ${model.id}: ${error.message}`);
  }
}

const { page, errors, close } = await launch(opts);
const shot = (name) => page.screenshot({ path: join(opts.artifacts, name) });
try {
  await openPage(page, url);
  const initial = await pageState(page);
  await shot('initial.png');
  console.log(`page flags: ${initial.megatron_args} (world size ${initial.world_size})`);
  checkPageMatchesCli(initial, 'initial page');

  // A user edit: more layers (120 splits over the default recipe's PP 8 x VPP 5 chunks).
  await typeValue(page, 'layers', 120);
  const edited = await waitForState(page, (state) => /--num-layers[ =]120\b/.test(state.megatron_args),
                                    'the layers edit to reach the flags');
  await waitForIdle(page);
  await shot('layers-120.png');
  check(edited.estimates_computed > initial.estimates_computed, 'the edit recomputed the estimate');
  check(edited.result.ranks[0].weight_bytes > initial.result.ranks[0].weight_bytes,
        'more layers, more weight bytes on PP rank 0');
  checkPageMatchesCli(edited, 'after the edit');

  // An invalid layout: the heads (32 or 64) do not split over TP 3. The result stays, the
  // error names a field.
  await typeValue(page, 'TP', 3);
  const invalid = await waitForState(page, (state) => state.error !== null, 'an error for TP 3');
  await waitForIdle(page);
  await shot('invalid-tp.png');
  check(invalid.error.field.length > 0 && invalid.error.message.length > 0,
        `TP 3 is rejected: ${invalid.error.field}: ${invalid.error.message}`);
  check(JSON.stringify(invalid.result) === JSON.stringify(edited.result),
        'the last valid result stays on screen');

  // The picker lists the catalog the CLI prints (both read the embedded presets; every preset's
  // link is checked against the CLI in web_links_match_cli.mjs). Each model family added for
  // issue 14, picked here (type its id, Enter), gives the CLI's estimate for the page's link.
  // The default page again, then one pick after another: a page load (or a second tab) per
  // model is too slow under software WebGL, and the picker clears its filter each time it opens.
  const catalog = cliJson(opts.cli, ['presets', '--json']);
  await openPage(page, url);
  for (const id of ['qwen3-next-80b-a3b', 'nemotron-nano-9b-v2', 'glm-4.5', 'glm-4.5-air',
                    'gpt-oss-120b', 'gpt-oss-20b', 'qwen3-coder-480b-a35b']) {
    const model = catalog.models.find((m) => m.id === id);
    check(model !== undefined, `the catalog has ${id}`);
    if (model) await checkPickedPreset(page, model);
  }

  check(errors.length === 0, `no errors in the page console ${errors.join(' | ')}`);
} catch (error) {
  check(false, `${error.stack ?? error}`);
  await shot('failure.png').catch(() => {});
} finally {
  await close();
  server.close();
}
finish('e2e');
