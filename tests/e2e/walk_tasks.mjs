// A new user's walk through issue #28's nine tasks, at 1280 x 720 and on a phone (390 x 844),
// for a person to look at: every step saves a screenshot (walk-<size>-<task>-<step>.png) and
// what the page reported then (the verdict, error, suggestions, import notes and warnings, the
// planner's rows, what it drew cut off and what it left untranslated) into walk-report.json in
// the artifacts folder. It asserts nothing of its own beyond the steps completing: the findings
// it leads to are checked by the e2e test of the behaviour (web_readable, web_ux, ...).
//   T1 default    open the default page, read the verdict and what it is (the published
//                 Llama-3-70B Bridge recipe); the light theme's settings
//   T2 deepseek   the DeepSeek-V3 link on 256 H800 at PP 16 EP 32: its error and suggestions,
//                 the first one applied; DeepSeek-V3 picked, GLM-4.5-Air imported, then PP +
//   T3 planner    a link without gbs: plan with "keep PP", its rows and the current layout;
//                 a search that finds nothing
//   T4 script     a launch script with a HuggingFace tokenizer and no --vocab-size, MXFP8 on
//                 H100; the exported flags and Bridge overrides of a dense model
//   T5 run        a Megatron-Bridge run_config.yaml and a training log, against the CLI's
//                 warnings
//   T6 what-if    the what-if table's recompute rows (full, block, N layers per chunk)
//   T7 chinese    the page in Chinese: default, an error, the planner, the imports
//   T8 links      odd links: only lang=zh, only v=1, one bad value, a key twice, a stray %,
//                 a link cut inside a key, a bad checksum; ETP against EP x PP
//   T9 keyboard   Tab from the page start, Enter, a typed field, the recipes picker
//
// Not a ctest test (a whole walk takes 20 minutes or more on a loaded 2-core machine, and it
// judges nothing): run it by hand after a change to the page, and look at the screenshots.
// usage: node tests/e2e/walk_tasks.mjs --site build/web-release/site
//          --cli build/native-release/cli/megamem --artifacts /tmp/walk [--only T1,T3]
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import {
  click, launch, openPage, pageState, pasteInto, pickModel, redraw, scrollIntoView,
  serve, tapKey, typeValue, waitForState,
} from './harness.mjs';

const only = process.argv.includes('--only')
  ? process.argv.splice(process.argv.indexOf('--only'), 2)[1].split(',') : null;
const { options } = await import('./harness.mjs');
const opts = options();
const { server, url: baseUrl } = await serve(opts.site);
const fixtures = 'tests/cli/fixtures';
const report = {};
let size = '';
let task = '';

const hfTokenizerScript = `#!/bin/bash
# Llama-3.1-8B with the HuggingFace tokenizer: no --vocab-size
torchrun --nproc_per_node 8 pretrain_gpt.py \\
  --num-layers 32 --hidden-size 4096 --ffn-hidden-size 14336 --num-attention-heads 32 \\
  --group-query-attention --num-query-groups 8 --seq-length 8192 \\
  --max-position-embeddings 131072 --micro-batch-size 1 --global-batch-size 128 --bf16 \\
  --swiglu --normalization RMSNorm --position-embedding-type rope --rotary-base 500000 \\
  --untie-embeddings-and-output-weights --disable-bias-linear \\
  --tokenizer-type HuggingFaceTokenizer --tokenizer-model meta-llama/Llama-3.1-8B \\
  --tensor-model-parallel-size 2 --use-distributed-optimizer \\
  --fp8-format e4m3 --fp8-recipe mxfp8
`;

// A screenshot and what the page reports, under the task's name.
async function record(page, step, extra = {}) {
  // An edited field's blinking cursor keeps the page drawing: its frames then must do.
  await redraw(page, 15_000).catch(() => {});
  const s = await pageState(page);
  const name = `walk-${size}-${task}-${step}.png`;
  await page.screenshot({ path: join(opts.artifacts, name) });
  const entry = {
    screenshot: name, url: s.url, verdict: s.verdict, error: s.error, link_error: s.link_error,
    layout_note: s.layout_note, suggestions: s.suggestions.map((x) => x.label),
    warnings: s.result?.warnings ?? null, assumptions: s.result?.assumptions ?? null,
    cut_off: s.clipped_text.filter((c) => !c.readable),
    shortened: s.clipped_text.filter((c) => c.readable).map((c) => `${c.where}: ${c.text}`),
    untranslated: s.untranslated, ...extra,
  };
  (report[`${size} ${task}`] ??= {})[step] = entry;
  const flag = entry.cut_off.length ? ` CUT ${JSON.stringify(entry.cut_off)}` : '';
  const zh = s.untranslated.length ? ` UNTRANSLATED ${JSON.stringify(s.untranslated)}` : '';
  console.log(`${size} ${task} ${step}: ${s.verdict} ${s.error ? `error ${s.error.message}` : ''}` +
              `${flag}${zh}`);
  return s;
}

async function showSettings(page, shown) {
  if (size !== 'phone') return;
  const s = await pageState(page);
  if (s.settings_shown_on_phone === shown) return;
  await click(page, 'Settings');
  await waitForState(page, (x) => x.settings_shown_on_phone === shown, 'the settings to toggle');
}

// The top bar's model picker, or on a phone the settings' one (the same picker).
async function pickAnyModel(page, id) {
  await showSettings(page, true);
  const rects = await page.evaluate(() => window.megamem.inputRects());
  await pickModel(page, id, rects['top model'] ? 'top model' : 'model preset');
}

async function pasteBox(page, box, button, text) {
  await showSettings(page, true);
  const rects = await page.evaluate(() => window.megamem.inputRects());
  if (!rects[box]) await click(page, `${box} (open)`);
  await pasteInto(page, box, text);
  await click(page, `${box}: ${button}`);
}

const tasks = {
  async T1(page) {
    await openPage(page, baseUrl);
    await waitForState(page, (s) => s.result && s.result.what_if.length > 0, 'the what-if table');
    const s = await record(page, 'default');
    report[`${size} T1`].default.model_name = s.config.model.name;
    await click(page, 'verdict');
    await record(page, 'verdict-tooltip');
    await click(page, 'theme');
    await waitForState(page, (x) => x.light_theme, 'the light theme');
    await showSettings(page, true);
    await record(page, 'light-settings');
    await scrollIntoView(page, 'sequence parallel');
    await record(page, 'light-checkboxes');
    await click(page, 'theme');
  },

  async T2(page) {
    await openPage(page, `${baseUrl}?v=1&model=deepseek-v3&gpu=h800&gpus=256&pp=16&ep=32`);
    await showSettings(page, false);
    const s = await record(page, 'link-results');
    await showSettings(page, true);
    await record(page, 'link-settings');
    if (s.suggestions.length > 0) {
      await click(page, `suggestion ${s.suggestions[0].label}`);
      const applied = await waitForState(page, (x) => x.error === null, 'the suggestion', 120_000)
        .catch(() => pageState(page));
      await record(page, 'suggestion-applied',
                   { world_size: applied.world_size, layout: applied.config.parallel });
    }
    await openPage(page, baseUrl);
    await pickAnyModel(page, 'deepseek-v3');
    let p = await waitForState(page, (x) => x.model_id === 'deepseek-v3', 'DeepSeek-V3');
    await record(page, 'picked', { layout: p.config.parallel.pipeline_model_parallel_layout });
    await showSettings(page, true);
    await click(page, 'PP +');
    p = await record(page, 'picked-pp-plus');
    report[`${size} T2`]['picked-pp-plus'].layout = p.config.parallel.pipeline_model_parallel_layout;
    report[`${size} T2`]['picked-pp-plus'].pp = p.config.parallel.pipeline_model_parallel_size;
    await openPage(page, baseUrl);
    const glm = readFileSync(join(fixtures, 'hf/GLM-4.5-Air/config.json'), 'utf8');
    await pasteBox(page, 'paste HuggingFace config.json', 'Import', glm);
    p = await waitForState(page, (x) => x.hf_import.notes.length > 0 || x.hf_import.error, 'GLM');
    await record(page, 'glm-imported', { notes: p.hf_import.notes, model: p.config.model.name,
                                         layout: p.config.parallel.pipeline_model_parallel_layout });
    await click(page, 'PP +');
    await record(page, 'glm-pp-plus');
  },

  async T3(page) {
    await openPage(page, `${baseUrl}?v=1&model=llama-3-70b&gpu=h100-80gb&gpus=64&tp=8&pp=4`);
    await showSettings(page, false);  // the planner is with the results
    await click(page, 'plan keep PP');
    await click(page, 'plan search');
    let s = await waitForState(page, (x) => x.planner.status !== 'searching' &&
                                            x.planner.status !== 'idle', 'the search', 600_000);
    await scrollIntoView(page, 'plan search');
    // The list as the page reports it (result.top, as `megamem plan --json`), the reference
    // line and the rows as drawn (folded rows counted).
    const rows = (s.planner.result?.top ?? []).map((c) => c.label);
    await record(page, 'keep-pp', { planner_error: s.planner.error, rows: rows.slice(0, 12),
                                    stats: s.planner.result?.stats,
                                    current: s.planner.shown_reference,
                                    shown_rows: s.planner.shown_rows });
    if (s.planner.status === 'done') {
      await scrollIntoView(page, 'plan row 0');
      await record(page, 'keep-pp-rows');
    }
    await typeValue(page, 'plan margin', 70);
    await click(page, 'plan search');
    s = await waitForState(page, (x) => x.planner.status !== 'searching', 'the search', 600_000);
    await scrollIntoView(page, 'plan search');
    await record(page, 'empty-search', { planner_error: s.planner.error,
                                         rows: s.planner.result?.top?.length,
                                         rejections: s.planner.result?.rejections });
  },

  async T4(page) {
    await openPage(page, baseUrl);
    await pasteBox(page, 'paste Megatron flags', 'Apply', hfTokenizerScript);
    const s = await waitForState(page, (x) => x.flags_import.notes.length > 0 ||
                                              x.flags_import.error, 'the script');
    await scrollIntoView(page, 'paste Megatron flags: Apply');
    await record(page, 'script', { notes: s.flags_import.notes, error: s.flags_import.error,
                                   model: s.config.model.name, vocab: s.config.model.vocab_size,
                                   megatron_args: s.megatron_args,
                                   bridge_overrides: s.bridge_overrides });
    await showSettings(page, false);
    await record(page, 'script-results');
  },

  async T5(page) {
    await openPage(page, baseUrl);
    const yamlPath = join(fixtures, 'bridge/llama32-1b-run-config.yaml');
    await pasteBox(page, 'paste a Megatron-Bridge config', 'Apply', readFileSync(yamlPath, 'utf8'));
    let s = await waitForState(page, (x) => x.bridge_import.notes.length > 0 ||
                                            x.bridge_import.error, 'the Bridge import');
    let cli = '';
    try {
      cli = execFileSync(opts.cli, ['estimate', '--bridge-config', yamlPath, '--world-size',
                                    String(s.world_size)], { encoding: 'utf8', stdio: 'pipe' });
    } catch (error) { cli = String(error.stdout) + String(error.stderr); }
    await record(page, 'bridge', { notes: s.bridge_import.notes, error: s.bridge_import.error,
                                   cli_text: cli.split('\n').filter((l) => /warn|note|!/i.test(l)) });
    const logPath = join(fixtures, 'logs/synthetic-gpt2-345m-tp2-pp2-torchrun.log');
    await pasteBox(page, 'paste a training log', 'Compare', readFileSync(logPath, 'utf8'));
    s = await waitForState(page, (x) => x.log_import.comparison !== null ||
                                        x.log_import.box?.error, 'the comparison');
    const cliCompare = JSON.parse(execFileSync(opts.cli, ['compare', logPath, '--json'],
                                               { encoding: 'utf8' }));
    await page.waitForFunction(() => window.megamem.inputRects()['use as anchor'] !== undefined,
                               null, { timeout: 60_000 }).catch(() => {});
    await scrollIntoView(page, 'use as anchor').catch(() => {});
    await record(page, 'log', { page_warnings: s.log_import.warnings,
                                cli_warnings: cliCompare.warnings });
  },

  async T6(page) {
    await openPage(page, `${baseUrl}?v=1&model=llama-3-70b&gpu=h100-80gb&gpus=64&tp=8&pp=4`);
    await showSettings(page, false);
    const s = await waitForState(page, (x) => x.result && x.result.what_if.length > 0, 'what-if');
    await scrollIntoView(page, 'what-if 1');
    await record(page, 'table', {
      rows: s.result.what_if.map((r) => `${r.label} | peak ` +
                                        `${(r.peak_total_bytes / 2 ** 30).toFixed(2)} | step ` +
                                        `${r.step_time_s?.toFixed(3)}`),
    });
  },

  async T7(page) {
    await openPage(page, `${baseUrl}?lang=zh`);
    await record(page, 'default');
    await openPage(page, `${baseUrl}?v=1&model=deepseek-v3&gpu=h800&gpus=256&pp=16&ep=32&lang=zh`);
    await showSettings(page, true);
    await record(page, 'error');
    await showSettings(page, false);
    await click(page, 'plan search');
    await waitForState(page, (x) => x.planner.status !== 'searching', 'the search', 600_000);
    await scrollIntoView(page, 'plan search');
    await record(page, 'planner');
    await openPage(page, `${baseUrl}?lang=zh`);
    await pasteBox(page, 'paste Megatron flags', 'Apply', hfTokenizerScript);
    await waitForState(page, (x) => x.flags_import.notes.length > 0, 'the script');
    await scrollIntoView(page, 'paste Megatron flags: Apply');
    await record(page, 'script');
  },

  async T8(page) {
    const links = {
      'only-lang': '?lang=zh', 'only-v': '?v=1', 'cp-two': '?v=1&model=qwen3-8b&gpus=16&cp=two',
      'gpus-negative': '?v=1&model=qwen3-8b&gpus=-32&tp=2', 'unknown-model': '?v=1&model=nope&gpus=8',
      'key-twice': '?v=1&model=qwen3-8b&tp=2&tp=4', 'stray-percent': '?v=1&model=qwen3-8b&gpus=8%',
      'cut-in-key': '?v=1&model=qwen3-8b&gpus=16&t',
      'etp': '?v=1&model=mixtral-8x7b&gpu=h100-80gb&gpus=16&ep=8&etp=4&pp=2',
    };
    for (const [step, query] of Object.entries(links)) {
      await openPage(page, `${baseUrl}${query}`);
      await showSettings(page, false);
      const s = await record(page, step, { model: s0(await pageState(page)) });
      if (step === 'etp') {
        await showSettings(page, true);
        await scrollIntoView(page, 'ETP');
        await record(page, 'etp-settings', { etp: s.config.parallel.expert_tensor_parallel_size });
      }
    }
    // A new link carries a checksum: cut one short and open it.
    await openPage(page, `${baseUrl}?v=1&model=qwen3-8b&gpus=16&tp=4&pp=2`);
    const full = (await pageState(page)).url;
    await openPage(page, full.slice(0, full.length - 6));
    await record(page, 'cut-link', { link: full });
  },

  async T9(page) {
    await openPage(page, baseUrl);
    const stops = [];
    for (let i = 0; i < 30; i += 1) {
      const before = await page.evaluate(() => window.megamem.keyboardFocus().id);
      await tapKey(page, 'Tab');
      // Not id 0: between two windows the keyboard is nowhere for a frame (read then, the
      // walk listed ':0' and the next Tab skipped the settings' first stop).
      await page.waitForFunction((id) => ![0, id].includes(window.megamem.keyboardFocus().id),
                                 before, { timeout: 60_000 }).catch(() => {});
      const f = await page.evaluate(() => window.megamem.keyboardFocus());
      stops.push(`${f.window}:${f.label || f.id}`);
      if (i === 3 || i === 12 || i === 25) await record(page, `tab-${i}`);
    }
    report[`${size} T9`].stops = stops;
    await openPage(page, baseUrl);
    await showSettings(page, true);
    await typeValue(page, 'micro-batch', 2);
    const s = await record(page, 'typed', {
      focus: await page.evaluate(() => window.megamem.keyboardFocus()) });
    report[`${size} T9`].typed.mbs = s.config.training.micro_batch_size;
    const before = await pageState(page);
    await click(page, 'recipes');
    await page.keyboard.type('qwen', { delay: 20 });
    await record(page, 'recipes-typed');
    await tapKey(page, 'Enter');
    // The model once the recipe is loaded: read at once, the state was still the one before
    // Enter (the report said Llama-3-70B beside a Qwen3 link).
    const loaded = await waitForState(page, (x) => x.model_id !== before.model_id, 'the recipe')
      .catch(() => pageState(page));
    await record(page, 'recipes-enter', { recipe_model: loaded.config.model.name,
                                          recipe_model_id: loaded.model_id });
  },
};

const s0 = (s) => `${s.config.model.name} ${s.world_size} GPUs TP${s.config.parallel.tensor_model_parallel_size}`;

const sizes = {
  '1280x720': { viewport: { width: 1280, height: 720 } },
  phone: { viewport: { width: 390, height: 844 }, deviceScaleFactor: 3, isMobile: true,
           hasTouch: true },
};
for (const [name, viewport] of Object.entries(sizes)) {
  size = name;
  for (const [id, run] of Object.entries(tasks)) {
    if (only && !only.includes(id)) continue;
    task = id;
    const browser = await launch(opts, { permissions: ['clipboard-read', 'clipboard-write'],
                                         ...viewport });
    try {
      await run(browser.page);
    } catch (error) {
      console.log(`${size} ${task}: step failed: ${error.stack ?? error}`);
      (report[`${size} ${task}`] ??= {}).failed = String(error);
      await browser.page.screenshot({ path: join(opts.artifacts, `walk-${size}-${task}-failed.png`) })
        .catch(() => {});
    } finally {
      if (browser.errors.length) (report[`${size} ${task}`] ??= {}).console = browser.errors;
      await browser.close().catch(() => {});
      writeFileSync(join(opts.artifacts, 'walk-report.json'), JSON.stringify(report, null, 1));
    }
  }
}

server.close();
console.log(`walk: report in ${join(opts.artifacts, 'walk-report.json')}`);
