// Browser end-to-end test of the run imports and exports (issue 13), against the CLI on the
// same files:
//   log        a public Megatron-LM log that stopped before its memory report gives the CLI's
//              error; a torchrun log pasted (Ctrl+V) into "paste a training log" gives, in
//              state().log_import.comparison, exactly what `megamem compare LOG --json` prints,
//              and loads the run's configuration (the page's link is the comparison's link);
//              the box notes what the CLI notes;
//   bridge     the Megatron-Bridge run_config.yaml fixture pasted into "paste a Megatron-Bridge
//              config" estimates as `megamem estimate --bridge-config FILE --json` does; an
//              unknown key is a warning naming it, a value megamem cannot use an error naming
//              the key, as in the CLI;
//   exports    "Download memory snapshot" downloads the bytes `megamem estimate --snapshot FILE
//              --rank P` writes; state().bridge_overrides and megatron_args are what
//              --print-bridge-overrides and --print-megatron-args print;
//   script     a launch script (a CJK comment, variables, bash arrays, continuations, a
//              command substitution, torchrun's world size) pasted into "paste Megatron flags"
//              applies as `megamem estimate --megatron-args @FILE --json` does, names the lines
//              it used and the line it could not read, keeps the GPU, and comes back from
//              state() byte for byte (UTF-8 unharmed); a config.json pasted after it replaces
//              the model and keeps the script's layout and training settings;
//   tokenizer  flags with a HuggingFace tokenizer and no --vocab-size: the box names the preset
//              the vocabulary comes from, and shows every warning the CLI prints for them; the
//              model is named as the preset its architecture equals (so is a Bridge run's);
//   large      a 100 MB paste is refused with a message naming the limit, and the page keeps
//              drawing frames;
//   real log   the ms-swift Qwen2-0.5B log, which prints no vocabulary, compares as `megamem
//              compare --json` does, with the solved vocabulary named in both.
// Fixtures: tests/cli/fixtures/logs (sources in their headers and test_megatron_log.cpp) and
// tests/cli/fixtures/bridge/llama32-1b-run-config.yaml (source in its header).
//
// usage: node web_run_imports.mjs --site DIR --cli PATH --artifacts DIR
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import {
  afterInput, check, cliJson, click, finish, firstDifference, frameCount, launch, openPage, options,
  pageState, serve, waitForIdle, waitForState,
} from './harness.mjs';

const opts = options();
const { server, url: baseUrl } = await serve(opts.site);
const fixtures = 'tests/cli/fixtures';
const realLog = join(fixtures, 'logs/gpt2-345m-fp16-1gpu.log');
const torchrunLog = join(fixtures, 'logs/synthetic-gpt2-345m-tp2-pp2-torchrun.log');
const swiftLog = join(fixtures, 'logs/ms-swift-qwen2-0.5b-dp2-bf16.log');
const bridgeYaml = join(fixtures, 'bridge/llama32-1b-run-config.yaml');
const scratch = mkdtempSync(join(tmpdir(), 'megamem-e2e-run-imports-'));
const shot = (page, name) => page.screenshot({ path: join(opts.artifacts, name) });

// The CLI's exit code, stdout and stderr.
const runCli = (args) => spawnSync(opts.cli, args, { encoding: 'utf8', maxBuffer: 1 << 28 });

const { page, errors, close } =
    await launch(opts, { permissions: ['clipboard-read', 'clipboard-write'], acceptDownloads: true });

// Puts text on the system clipboard, then Ctrl+V into the box (the browser's paste event
// carries it to ImGui), and presses the box's button.
async function pasteAndPress(box, button, text) {
  await click(page, box);
  await page.evaluate((value) => navigator.clipboard.writeText(value), text);
  await page.keyboard.press('Control+A');
  const since = await frameCount(page);
  await page.keyboard.press('Control+V');
  await afterInput(page, since, { idle: false });  // the paste is in the box before the button
  await click(page, `${box}: ${button}`);
}

async function logChecks() {
  const logBox = 'paste a training log';
  await click(page, `${logBox} (open)`);
  // A real log whose run stopped before its first memory report: the CLI's error, inline.
  await pasteAndPress(logBox, 'Compare', readFileSync(realLog, 'utf8'));
  const failed = await waitForState(page, (s) => s.log_import.error !== '', 'the log error');
  const cliFailed = runCli(['compare', realLog]);
  check(cliFailed.status === 1 && cliFailed.stderr.includes(`error: ${failed.log_import.error}\n`),
        `a log without memory reports: the page says what the CLI says (${failed.log_import.error})`);
  check(failed.log_import.comparison === null, 'no comparison is shown for it');

  const before = await pageState(page);
  await pasteAndPress(logBox, 'Compare', readFileSync(torchrunLog, 'utf8'));
  const read = await waitForState(page, (s) => s.log_import.comparison !== null, 'the log comparison');
  await waitForIdle(page);
  await shot(page, 'run-imports-log.png');
  // The page keeps its GPU (a log does not name one): the CLI is told the same.
  const cli = cliJson(opts.cli, ['compare', torchrunLog, '--json', '--base-url', baseUrl,
                                 '--gpu', before.gpu_id]);
  const difference = firstDifference(read.log_import.comparison, cli);
  check(difference === '', `the page's comparison is \`megamem compare --json\`'s ${difference}`);
  check(cli.ranks.length === 4 && read.log_import.comparison.ranks.length === 4,
        `every printed rank is compared (${read.log_import.comparison.ranks.map((r) => r.global_rank)})`);
  check(read.url === cli.link, `the run's configuration is loaded: the page's link is ${cli.link}`);
  for (const rank of cli.ranks) {
    const pageRank = read.result.ranks.find((r) => r.pp_rank === rank.pp_rank);
    check(pageRank !== undefined &&
              pageRank.peak_allocated_bytes === rank.estimate.peak_allocated_bytes &&
              pageRank.peak_reserved_bytes === rank.estimate.peak_reserved_bytes,
          `rank ${rank.global_rank}: the calculator shows the compared estimate`);
  }
  check(read.log_import.error === '', 'no error after the good log');
  // The notes `megamem compare` prints are the box's notes (#28 item 12).
  const cliNotes = runCli(['compare', torchrunLog]).stderr.split('\n')
    .filter((l) => l.startsWith('megamem: note: ')).map((l) => l.slice('megamem: note: '.length));
  check(cliNotes.length > 0 && JSON.stringify(read.log_import.notes) === JSON.stringify(cliNotes),
        `the log box notes what the CLI notes: ${read.log_import.notes.join(' / ').slice(0, 120)}`);
}

// Writes text to a scratch file for the CLI.
function scratchFile(name, text) {
  const path = join(scratch, name);
  writeFileSync(path, text);
  return path;
}

async function bridgeChecks() {
  const bridgeBox = 'paste a Megatron-Bridge config';
  await click(page, `${bridgeBox} (open)`);
  const yaml = readFileSync(bridgeYaml, 'utf8');
  await pasteAndPress(bridgeBox, 'Apply', yaml);
  const applied = await waitForState(page, (s) => s.bridge_import.notes.length > 0 ||
                                                  s.bridge_import.error !== '', 'the Bridge import');
  await waitForIdle(page);
  const state = await pageState(page);
  await shot(page, 'run-imports-bridge.png');
  check(applied.bridge_import.error === '', `the run_config.yaml applies (${applied.bridge_import.error})`);
  const cli = cliJson(opts.cli, ['estimate', '--bridge-config', bridgeYaml, '--world-size',
                                 String(state.world_size), '--gpu', state.gpu_id, '--json']);
  const difference = firstDifference(state.result.ranks, cli.ranks);
  check(difference === '' && cli.ranks.length > 0,
        `the page estimates the YAML as \`megamem estimate --bridge-config --json\` does ${difference}`);

  // A run whose architecture is a preset's is named as the preset, not by its provider class
  // (#28 item 6), as the CLI names it.
  const llama8b = join(fixtures, 'bridge/llama31-8b-run-config.yaml');
  await pasteAndPress(bridgeBox, 'Apply', readFileSync(llama8b, 'utf8'));
  const named = await waitForState(page, (s) => s.config.model.num_layers === 32, 'the 8B run');
  const cliNamed = runCli(['estimate', '--bridge-config', llama8b, '--world-size',
                           String(named.world_size)]);
  check(named.model_id === 'llama-3.1-8b' && named.config.model.name === 'Llama-3.1-8B' &&
        cliNamed.stdout.startsWith('Llama-3.1-8B '),
        `a Bridge run of Llama-3.1-8B's architecture is named so: ${named.config.model.name}`);

  // An unknown key: a warning naming it, in the page and in the CLI.
  const unknown = yaml.replace(/^model:\n/m, 'model:\n  made_up_knob: 3\n');
  await pasteAndPress(bridgeBox, 'Apply', unknown);
  const warned = await waitForState(page, (s) => s.bridge_import.notes.some((n) => /made_up_knob/.test(n)),
                                    'a warning naming the unknown key');
  const cliWarned = runCli(['estimate', '--bridge-config', scratchFile('unknown.yaml', unknown),
                            '--world-size', String(state.world_size)]);
  const note = warned.bridge_import.notes.find((n) => /made_up_knob/.test(n));
  check(/^warning: /.test(note) && cliWarned.stderr.includes(note.replace(/^warning: /, '')),
        `an unknown key is a warning naming it, as in the CLI: ${note}`);

  // A value megamem cannot use: an error naming the key, as the CLI's.
  const bad = yaml.replace(/^( +)num_layers: \d+$/m, '$1num_layers: many');
  await pasteAndPress(bridgeBox, 'Apply', bad);
  const failed = await waitForState(page, (s) => s.bridge_import.error !== '', 'a Bridge error');
  const cliFailed = runCli(['estimate', '--bridge-config', scratchFile('bad.yaml', bad),
                            '--world-size', String(state.world_size)]);
  check(/num_layers/.test(failed.bridge_import.error) && cliFailed.status !== 0 &&
            cliFailed.stderr.includes(failed.bridge_import.error.replace(/^[^:]*: /, '')),
        `a value megamem cannot use is an error naming the key: ${failed.bridge_import.error}`);
}

async function exportChecks() {
  const state = await pageState(page);
  const rank = state.selected_rank;
  const downloaded = page.waitForEvent('download', { timeout: 20_000 });
  await click(page, 'download memory snapshot');
  const download = await downloaded;
  const pageBytes = readFileSync(await download.path());
  const cliFile = join(scratch, 'cli.pickle');
  execFileSync(opts.cli, ['estimate', '--url', state.url, '--snapshot', cliFile, '--rank', String(rank)],
               { stdio: 'ignore' });
  const cliBytes = readFileSync(cliFile);
  check(pageBytes.length > 0 && pageBytes.equals(cliBytes),
        `the snapshot download (${download.suggestedFilename()}, ${pageBytes.length} bytes) is ` +
        `\`megamem estimate --snapshot --rank ${rank}\`'s (${cliBytes.length} bytes)`);
  const after = await pageState(page);
  check(after.snapshot.pp_rank === rank && after.snapshot.bytes === pageBytes.length,
        `state().snapshot reports it: ${JSON.stringify(after.snapshot)}`);
  const printed = cliJson(opts.cli, ['estimate', '--url', state.url, '--json',
                                     '--print-megatron-args', '--print-bridge-overrides']);
  check(after.bridge_overrides === printed.bridge_overrides,
        `the Bridge overrides shown are --print-bridge-overrides': ${after.bridge_overrides.slice(0, 80)}...`);
  check(after.megatron_args === printed.megatron_args, 'the Megatron flags shown are --print-megatron-args\'');
  await shot(page, 'run-imports-export.png');
}

// A launch script as people paste it; line numbers matter below.
const launchScript = [
  '#!/bin/bash',                                              // 1
  '# 训练 Qwen3 风格的小模型：张量并行 2，流水线并行 2',        // 2
  'export CUDA_DEVICE_MAX_CONNECTIONS=1',                     // 3
  'GPUS_PER_NODE=8',                                          // 4
  'NODES=$(scontrol show hostnames | wc -l)',                 // 5
  'NODES=2  # 两个节点',                                      // 6
  'TP=2',                                                     // 7
  'DISTRIBUTED_ARGS=(--nproc_per_node $GPUS_PER_NODE --nnodes $NODES)', // 8
  'MODEL_ARGS=(',                                             // 9
  '    --num-layers 24   # 24 层',                            // 10
  '    --hidden-size 2048',                                   // 11
  '    --num-attention-heads 16',                             // 12
  ')',                                                        // 13
  'MODEL_ARGS+=(--seq-length 2048 --max-position-embeddings 2048)', // 14
  'TRAIN_ARGS="--micro-batch-size 2 --bf16 --vocab-size 50257"', // 15
  'mkdir -p "$(dirname $CKPT)"',                              // 16
  'torchrun ${DISTRIBUTED_ARGS[@]} pretrain_gpt.py \\',      // 17
  '    "${MODEL_ARGS[@]}" ${TRAIN_ARGS} \\',                  // 18
  '    --tensor-model-parallel-size $TP --pipeline-model-parallel-size 2 \\', // 19
  '    --wandb-exp-name "实验-α" --save $CKPT',                // 20
].join('\n') + '\n';

async function launchScriptChecks() {
  const flagsBox = 'paste Megatron flags';
  const before = await pageState(page);
  await click(page, `${flagsBox} (open)`);
  await pasteAndPress(flagsBox, 'Apply', launchScript);
  const applied = await waitForState(page, (s) => s.flags_import.notes.length > 0 ||
                                                  s.flags_import.error !== '', 'the script import');
  await waitForIdle(page);
  const settled = await pageState(page);
  await shot(page, 'run-imports-launch-script.png');
  const notes = applied.flags_import.notes;
  check(applied.flags_import.error === '', `the launch script applies (${applied.flags_import.error})`);
  check(applied.flags_import.text === launchScript,
        'the pasted script comes back from state() byte for byte (CJK comments and values too)');
  check(notes[0] === "applied on 16 GPUs, the launcher's --nproc_per_node x --nnodes (GPU, " +
                     'runtime and environment settings kept)', `the GPUs are torchrun's: ${notes[0]}`);
  check(notes.includes('read the pretrain_gpt.py command: used lines 4, 6-15, 17-20; ignored 3 lines'),
        `the box says which lines it used: ${notes.join(' / ')}`);
  check(notes.includes('line 20: $CKPT is not set in the paste; read as empty') &&
            !notes.some((n) => /line 5:/.test(n)),
        'an unset variable the command uses is a warning naming its line; line 5 (overwritten) is not');
  check(applied.config.model.num_layers === 24 && applied.world_size === 16 &&
            applied.gpu_id === before.gpu_id,
        `the run is loaded on the page's GPU (${applied.gpu_id}, ${applied.world_size} GPUs)`);
  const file = scratchFile('train.sh', launchScript);
  const cli = runCli(['estimate', '--megatron-args', `@${file}`, '--gpu', applied.gpu_id, '--json']);
  const cliJsonOut = JSON.parse(cli.stdout);
  const difference = firstDifference(settled.result.ranks, cliJsonOut.ranks);
  check(difference === '' && cliJsonOut.ranks.length > 0,
        `the page estimates the script as \`megamem estimate --megatron-args @FILE --json\` does ${difference}`);
  check(cli.stderr.includes('used lines 4, 6-15, 17-20; ignored 3 lines'),
        'the CLI names the same lines');

  // The HF box after it: the model changes, the script's layout and training stay.
  const hfBox = 'paste HuggingFace config.json';
  await click(page, `${hfBox} (open)`);
  await pasteAndPress(hfBox, 'Import', readFileSync(join(fixtures, 'hf/Qwen3-8B/config.json'), 'utf8'));
  const hf = await waitForState(page, (s) => s.config.model.num_layers === 36, 'the HF import');
  check(JSON.stringify(hf.config.parallel) === JSON.stringify(applied.config.parallel) &&
            JSON.stringify(hf.config.training) === JSON.stringify(applied.config.training) &&
            hf.gpu_id === applied.gpu_id,
        'a config.json keeps the layout, training settings and GPU the script set');
}

// Flags with a HuggingFace tokenizer and no --vocab-size (#28 items 6 and 12): the box says
// where the vocabulary came from, with every warning `megamem estimate --megatron-args` prints.
async function tokenizerChecks() {
  const flagsBox = 'paste Megatron flags';
  const flags = '--num-layers 32 --hidden-size 4096 --ffn-hidden-size 14336 ' +
    '--num-attention-heads 32 --group-query-attention --num-query-groups 8 --seq-length 8192 ' +
    '--max-position-embeddings 8192 --micro-batch-size 1 --bf16 --swiglu --normalization RMSNorm ' +
    '--position-embedding-type rope --untie-embeddings-and-output-weights ' +
    '--disable-bias-linear --tokenizer-type HuggingFaceTokenizer ' +
    '--tokenizer-model meta-llama/Llama-3.1-8B --tensor-model-parallel-size 2';
  await pasteAndPress(flagsBox, 'Apply', flags);
  const applied = await waitForState(page, (s) => s.flags_import.text === flags &&
                                                  s.config.model.num_layers === 32, 'the flags');
  const cli = runCli(['estimate', '--megatron-args', flags, '--world-size', String(applied.world_size),
                      '--gpu', applied.gpu_id]);
  const cliWarnings = cli.stderr.split('\n').filter((l) => l.startsWith('megamem: warning: ') &&
                                                           !l.includes('note:'))
    .map((l) => l.replace('megamem: warning: ', 'warning: '));
  const notes = applied.flags_import.notes;
  check(applied.config.model.vocab_size === 128256 &&
        notes.some((n) => n.startsWith('warning: vocabulary 128256 of Llama-3.1-8B')),
        `the box names the vocabulary of the tokenizer's model: ${notes.join(' / ')}`);
  const missing = cliWarnings.filter((w) => !notes.includes(w) &&
                                            !applied.result.warnings.includes(w.slice(9)));
  // The flags are Llama-3.1-8B's architecture; --max-position-embeddings is a run setting
  // (#28 item 6).
  check(applied.model_id === 'llama-3.1-8b' && applied.config.model.name === 'Llama-3.1-8B',
        `the flags are named as the preset they equal: ${applied.config.model.name}`);
  check(cliWarnings.length > 0 && missing.length === 0,
        `the page shows every warning the CLI prints${missing.length ? `; not: ${missing}` : ''}`);
}

async function largePasteChecks() {
  const logBox = 'paste a training log';
  const before = await pageState(page);
  await click(page, logBox);
  // 100 MB in a paste event (what Ctrl+V of a whole training log delivers), then the Ctrl+V
  // itself, whose own paste event finds an empty system clipboard.
  await page.evaluate(() => navigator.clipboard.writeText(''));
  await page.evaluate(() => {
    const data = new DataTransfer();
    data.setData('text/plain', 'x'.repeat(100 * 1024 * 1024));
    document.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true }));
  });
  await page.keyboard.press('Control+V');
  const refused = await waitForState(page, (s) => /MiB/.test(s.log_import.error), 'the paste refusal');
  check(/100\.0 MiB/.test(refused.log_import.error) && /up to 8 MiB/.test(refused.log_import.error),
        `a 100 MB paste is refused, saying why: ${refused.log_import.error}`);
  check(refused.log_import.text_bytes === before.log_import.text_bytes,
        'the box keeps its text');
  const frames = await page.evaluate(() => window.megamem.frames());
  await page.mouse.move(10, 10);
  await page.mouse.move(400, 300);
  const drew = await page.waitForFunction((n) => window.megamem.frames() > n, frames,
                                          { timeout: 60_000 }).then(() => true, () => false);
  check(drew, 'the page keeps drawing');
  await shot(page, 'run-imports-large-paste.png');
}

// The real ms-swift log prints no vocabulary: the page solves it from the parameter count as
// `megamem compare` does, and shows the same comparison and the warning saying so.
async function realLogChecks() {
  const logBox = 'paste a training log';
  const before = await pageState(page);
  await pasteAndPress(logBox, 'Compare', readFileSync(swiftLog, 'utf8'));
  const read = await waitForState(page, (s) => s.log_import.comparison !== null &&
                                  s.log_import.comparison.ranks[0].params.logged === 630167424,
                                  'the ms-swift log comparison');
  await shot(page, 'run-imports-real-log.png');
  const cli = runCli(['compare', swiftLog, '--json', '--base-url', baseUrl, '--gpu', before.gpu_id]);
  const difference = firstDifference(read.log_import.comparison, JSON.parse(cli.stdout));
  check(difference === '' && read.log_import.error === '',
        `a real log without a vocabulary: the page's comparison is the CLI's ${difference}`);
  const note = read.log_import.warnings.find((w) => /padded vocabulary 151936 solved/.test(w));
  check(note !== undefined && cli.stderr.includes(note),
        `the page and the CLI say the vocabulary was solved: ${note}`);
}

try {
  await openPage(page, baseUrl);
  await logChecks();
  await bridgeChecks();
  await exportChecks();
  await launchScriptChecks();
  await tokenizerChecks();
  await largePasteChecks();
  await realLogChecks();
  check(errors.length === 0, `no console errors (${errors.slice(0, 3).join(' | ')})`);
} catch (error) {
  check(false, `test ran to the end: ${error.stack}`);
} finally {
  await close();
  server.close();
  rmSync(scratch, { recursive: true, force: true });
}
finish('web_run_imports');
