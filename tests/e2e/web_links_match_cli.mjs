// Browser end-to-end test: share links open the exact configuration, and the page's numbers
// are the CLI's.
//
//   1. For every model preset (on its own, and on 8 GPUs of each GPU preset in turn) and every
//      recipe: open its link (a page load for the first, back/forward's path for the rest),
//      and check that window.megamem.state().result is exactly what `megamem estimate --url
//      <link> --json` prints (every rank's bytes, the module tree, the timeline, the what-if
//      table and the link itself), and that the address bar holds the link in its canonical
//      form.
//   2. Editing a knob changes the address; each committed edit is a history entry, and back
//      and forward restore the configurations in order.
//   3. Malformed links (unknown preset, bad value, unknown key, newer version) show the error
//      panel naming the parameter, with the default configuration below it.
// Screenshots go to the artifacts folder. Exit 77 (ctest: skipped) when the site is not built.
//
// usage: node web_links_match_cli.mjs --site DIR --cli PATH --artifacts DIR
import { join } from 'node:path';

import {
  check, cliEstimateForLink, cliJson, fail, finish, firstDifference, launch, moveMouseAway,
  navigate, openPage, options, pageState, serve, typeValue, waitForState,
} from './harness.mjs';

const opts = options();
const { server, url: baseUrl } = await serve(opts.site);
const { page, errors, close } = await launch(opts);
const catalog = cliJson(opts.cli, ['presets', '--json']);

// The page's result against the CLI's for the same link. The first link is a page load; the
// rest are opened in that page as back/forward does (one wasm load instead of 47 under
// software WebGL; app_open_link() reads the address either way).
let loaded = false;
async function checkLink(query, what) {
  const link = `${baseUrl}?${query}`;
  if (loaded) {
    await navigate(page, link);
  } else {
    await openPage(page, link);
    loaded = true;
  }
  const state = await pageState(page);
  if (!check(state.link_error === null && state.error === null && state.result !== null,
             `${what}: the link opens a valid configuration`)) {
    console.log(`  link_error ${JSON.stringify(state.link_error)} error ${JSON.stringify(state.error)}`);
    return null;
  }
  const cli = cliEstimateForLink(opts.cli, link, baseUrl);
  const difference = firstDifference(state.result, cli);
  check(difference === '', `${what}: page result = CLI --url --json` +
        (difference ? ` (first difference ${difference})` : ` (${state.result.ranks.length} ranks, ` +
         `${state.result.what_if.length} what-if rows)`));
  const address = await page.evaluate(() => location.href);
  check(address === state.url && state.url === cli.link,
        `${what}: the address bar shows the canonical link ${state.url}`);
  return state;
}

try {
  // --- 1. every model preset and recipe ---------------------------------------------------
  check(catalog.models.length >= 10 && catalog.recipes.length >= 5,
        `the catalog lists ${catalog.models.length} models, ${catalog.gpus.length} GPUs, ` +
        `${catalog.recipes.length} recipes`);
  for (const [i, model] of catalog.models.entries()) {
    await checkLink(`v=1&model=${model.id}`, `model ${model.id}`);
    // The same model on 8 GPUs of one of the GPU presets (rotating), pipelined when its
    // layers split in two.
    const gpu = catalog.gpus[i % catalog.gpus.length];
    const pp = model.num_layers % 2 === 0 ? 2 : 1;
    // Megatron's default selective set is core_attn, which DeepSeek-V4's attention refuses
    // (deepseek_v4_hybrid_attention.py, dev): its recipes checkpoint moe_act and mla_up_proj.
    const modules = model.id.startsWith('deepseek-v4') ? '&recompute-modules=moe_act,mla_up_proj'
                                                       : '';
    await checkLink(`v=1&model=${model.id}&gpu=${gpu.id}&gpus=8&pp=${pp}&recompute=selective` +
                    modules, `model ${model.id} on 8 x ${gpu.id}, PP ${pp}, selective recompute`);
  }
  for (const recipe of catalog.recipes) {
    // The recipe's own link, as the CLI writes it.
    const encoded = cliJson(opts.cli, ['url', 'encode', '--recipe', recipe.id, '--json',
                                       '--base-url', baseUrl]);
    const query = encoded.query;
    const state = await checkLink(query, `recipe ${recipe.id}`);
    if (state && recipe.id === 'deepseek-v3-h100-1024') {
      await moveMouseAway(page);
      await page.screenshot({ path: join(opts.artifacts, 'links-recipe-deepseek-v3.png') });
    }
  }

  // --- 2. edits change the address; back and forward walk them ------------------------
  await openPage(page, `${baseUrl}?v=1&model=llama-3.1-8b&gpu=h100-80gb&gpus=8`);
  const first = await pageState(page);
  await typeValue(page, 'TP', 2);
  const second = await waitForState(page, (s) => s.query.includes('tp=2'), 'TP 2 in the link');
  // The page pushes the address once the edited field is let go: a frame or two after state().
  const addressShows = (parts) => page.waitForFunction(
      (p) => p.every((part) => location.search.includes(part)), parts, { timeout: 5_000 })
    .then(() => true, () => false);
  check(await addressShows(['tp=2']), `editing TP changes the address: ${second.url}`);
  await typeValue(page, 'PP', 4);
  const third = await waitForState(page, (s) => s.query.includes('pp=4'), 'PP 4 in the link');
  check(await addressShows(['tp=2', 'pp=4']), `editing PP changes the address again: ${third.url}`);
  check(third.result.ranks.length === 4 && second.result.ranks.length === 1,
        'the edits changed the estimate (1 rank, then 4)');

  await page.goBack();
  const back1 = await waitForState(page, (s) => s.url === second.url, 'back to the TP 2 edit');
  check(back1.result.ranks.length === 1 && back1.config.parallel.tensor_model_parallel_size === 2,
        'back: the TP 2 configuration (1 rank) is restored');
  await page.goBack();
  const back2 = await waitForState(page, (s) => s.url === first.url, 'back to the opened link');
  check(back2.config.parallel.tensor_model_parallel_size === 1, 'back again: the opened link');
  await page.goForward();
  await waitForState(page, (s) => s.url === second.url, 'forward to TP 2');
  await page.goForward();
  const forward = await waitForState(page, (s) => s.url === third.url, 'forward to PP 4');
  check(forward.result.ranks.length === 4, 'forward twice: the PP 4 configuration again');
  check(JSON.stringify(forward.result) === JSON.stringify(third.result),
        'history restores the exact result');

  // --- 3. malformed links ---------------------------------------------------------------
  // What parses is applied (the model's 32 or the default's 80 layers), the first parameter
  // that does not is named, and the top bar says the link was read in part (#28 item 11).
  const malformed = [
    ['v=1&model=gpt-17', 'model', 'an unknown model preset', 80],
    // The rest on the default's model, not on an empty one no layout suits.
    ['v=1&model=gpt-17&gpus=8&tp=2', 'model', 'an unknown model with settings', 80],
    ['v=1&model=llama-3.1-8b&tp=two', 'tp', 'a value that is not a number', 32],
    ['v=1&model=llama-3.1-8b&tensor_parallel=2', 'tensor_parallel', 'an unknown key', 32],
    ['v=99&model=llama-3.1-8b', 'v', 'a newer link version', 80],
    ['v=1&model=llama-3.1-8b&gpus=8&tp=2&tp=4', 'tp', 'a repeated key', 32],
    ['v=1&model=llama-3.1-8b&gpus=-32&cp=two', 'gpus', 'two bad values', 32],
    ['v=1&model=llama-3.1-8b&gpus=8&tp=2&se', 'se', 'a link cut inside a key', 32],
    // Written as v=1&c=98e0&model=qwen3-8b&gpus=8&tp=2&seq=10240, cut inside the last value.
    ['v=1&c=98e0&model=qwen3-8b&gpus=8&tp=2&seq=10', 'c', 'a link cut inside a value', 36],
  ];
  for (const [index, [query, field, what, layers]] of malformed.entries()) {
    await openPage(page, `${baseUrl}?${query}`);
    const state = await pageState(page);
    check(state.link_error !== null && state.link_error.field === field,
          `${what} (?${query}) shows the error panel naming '${field}': ` +
          `${JSON.stringify(state.link_error)}`);
    check(state.result !== null && state.error === null &&
          state.config.model.num_layers === layers,
          `${what}: what the link sets is estimated below the panel (${layers} layers): ` +
          `${state.config.model.num_layers}`);
    check(state.verdict.startsWith('link partly read - '),
          `${what}: the top bar says the link was read in part: ${state.verdict}`);
    check(await page.evaluate(() => location.search.slice(1)) === query,
          `${what}: the address bar keeps the link that was opened`);
    if (index === 0) {
      await moveMouseAway(page);
      await page.screenshot({ path: join(opts.artifacts, 'links-malformed.png') });
    }
  }
  // A GPU count that does not parse keeps the default configuration's (64), as an unknown model
  // keeps its model: the rest of the link is estimated on it, not refused on one GPU, and the
  // top bar says the link was read in part (#28 item 11).
  await openPage(page, `${baseUrl}?v=1&model=qwen3-8b&gpus=-32&tp=2`);
  const badGpus = await pageState(page);
  check(badGpus.link_error?.field === 'gpus' &&
        badGpus.link_error.message === "expects a positive whole number, got '-32'" &&
        badGpus.world_size === 64 && badGpus.config.parallel.tensor_model_parallel_size === 2 &&
        badGpus.error === null && badGpus.verdict.startsWith('link partly read - '),
        `a bad GPU count keeps the default's 64 GPUs under the rest: ${badGpus.world_size} GPUs, ` +
        `${JSON.stringify(badGpus.link_error)}, ${badGpus.verdict}`);
  check(errors.length === 0, `no errors in the page console ${errors.join(' | ')}`);
} catch (error) {
  fail(`${error.stack ?? error}`);
  await page.screenshot({ path: join(opts.artifacts, 'links-failure.png') }).catch(() => {});
} finally {
  await close();
  server.close();
}
finish('e2e links');
