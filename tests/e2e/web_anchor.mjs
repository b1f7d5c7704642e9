// Browser end-to-end test of the anchor (issue #26): a torchrun log with memory reports pasted
// into "paste a training log", then "use as anchor", anchors the page's estimate; the page's
// state().anchored is what `megamem estimate --url <the page's link> --json` prints as
// `anchored` (the link carries the anchor: anchor=, anchor-*), and its per-rank numbers are
// those of `megamem estimate --anchor LOG` (the link form is faithful to the log). An edit
// that the anchor cannot carry (another model) shows the raw verdict with the reason, in both
// languages; "drop anchor" takes the anchor out of the page and its link. The planner, which
// prices its rows raw, shows the raw peak it compares them with and says the top bar's is
// anchored.
//
// usage: node web_anchor.mjs --site DIR --cli PATH --artifacts DIR
import { join } from 'node:path';
import { readFileSync } from 'node:fs';

import {
  check, cliEstimateForLink, cliJson, click, finish, firstDifference, launch, moveMouseAway,
  navigate, openPage, options, pasteInto, scrollIntoView, serve, waitForState,
} from './harness.mjs';

const opts = options();
const { server, url: baseUrl } = await serve(opts.site);
const torchrunLog = join('tests/cli/fixtures', 'logs/synthetic-gpt2-345m-tp2-pp2-torchrun.log');
const { page, errors, close } =
    await launch(opts, { permissions: ['clipboard-read', 'clipboard-write'] });

async function anchorChecks() {
  const logBox = 'paste a training log';
  await click(page, `${logBox} (open)`);
  await pasteInto(page, logBox, readFileSync(torchrunLog, 'utf8'));
  await click(page, `${logBox}: Compare`);
  await waitForState(page, (s) => s.log_import.comparison !== null, 'the log comparison');
  await click(page, 'use as anchor');
  const anchored = await waitForState(page, (s) => s.anchored !== null, 'the anchored estimate');
  await page.screenshot({ path: join(opts.artifacts, 'anchor.png') });
  check(/[?&]anchor=/.test(anchored.url) && /[?&]anchor-peak=\d+/.test(anchored.url),
        `the page's link carries the anchor: ${anchored.url.slice(0, 160)}...`);
  check(anchored.url.length < 2000, `the anchored link is compact (${anchored.url.length} chars)`);
  const cli = cliEstimateForLink(opts.cli, anchored.url, baseUrl);
  const difference = firstDifference(anchored.anchored, cli.anchored);
  check(difference === '', `the page's anchored numbers are the CLI's for its link ${difference}`);
  const fromLog = cliJson(opts.cli, ['estimate', '--url', anchored.result.link, '--anchor',
                                     torchrunLog, '--json']);
  const rankDifference = firstDifference(anchored.anchored.ranks, fromLog.anchored.ranks);
  check(rankDifference === '',
        `anchored on the link's anchor = anchored on the log (estimate --anchor) ${rankDifference}`);
  const limitingBytes = Math.max(...anchored.anchored.ranks.map((r) => r.anchored_peak_total_bytes));
  const limitingGib = (limitingBytes / 2 ** 30).toFixed(2);
  check(anchored.verdict.includes(`${limitingGib} /`) && anchored.anchor_refused === null,
        `the verdict is of the anchored peaks (${limitingGib} GiB): ${anchored.verdict}`);

  // The planner prices its rows raw: its line with the current configuration has the raw
  // peak the rows' changes are from, and says plainly that the top bar's figure is anchored
  // (issue #28: it compared raw rows with nothing said while the top bar was anchored).
  await scrollIntoView(page, 'plan search');
  await click(page, 'plan search');
  await moveMouseAway(page);
  const planned = await waitForState(page, (s) => s.planner.status === 'done' &&
                                     s.planner.shown_reference !== '', 'the planner search');
  const rawBytes = planned.result.ranks[planned.result.limiting_pp_rank].peak_total_bytes;
  check(planned.planner.shown_reference.includes(`${(rawBytes / 2 ** 30).toFixed(2)} GiB`) &&
        planned.planner.shown_anchor_note.includes('raw estimates') &&
        planned.planner.shown_anchor_note.includes(`${limitingGib} GiB`),
        `the planner's figures are raw and it says so beside the top bar's anchored ` +
        `${limitingGib} GiB: "${planned.planner.shown_reference}" / ` +
        `"${planned.planner.shown_anchor_note}"`);

  // The same link opened afresh: the anchor comes back from the link alone.
  await navigate(page, anchored.url);
  const reopened = await waitForState(page, (s) => s.anchored !== null, 'the reopened anchor');
  check(firstDifference(reopened.anchored, anchored.anchored) === '',
        'the link opened afresh anchors the same');

  // Another model: the anchor does not apply, and the page says so (raw verdict shown).
  await navigate(page, `${baseUrl}?v=1&model=llama-3-70b&gpus=64&tp=8&pp=4&` +
                       anchored.url.slice(anchored.url.indexOf('anchor=')));
  const refused = await waitForState(page, (s) => s.anchor_refused !== null, 'the refusal');
  check(refused.anchored === null && refused.result !== null,
        `another model: raw estimate, anchor refused (${refused.anchor_refused.message})`);

  // In Chinese: the anchored and the refused page draw no text without a row.
  await navigate(page, `${anchored.url}&lang=zh`);
  await waitForState(page, (s) => s.anchored !== null && s.language === 'zh', 'the anchor in Chinese');
  await navigate(page, `${refused.url}&lang=zh`);
  const chinese = await waitForState(page, (s) => s.anchor_refused !== null && s.language === 'zh',
                                     'the refusal in Chinese');
  check(chinese.untranslated.length === 0 && chinese.link_error === null,
        `every anchor text has a Chinese row (${chinese.untranslated.slice(0, 3).join(' | ')})`);
  await page.screenshot({ path: join(opts.artifacts, 'anchor-refused-zh.png') });
  await navigate(page, refused.url);
  await waitForState(page, (s) => s.anchor_refused !== null && s.language === 'en', 'the refusal again');

  await click(page, 'drop anchor');
  const dropped = await waitForState(page, (s) => !/anchor/.test(s.url), 'the anchor dropped');
  check(dropped.anchored === null && dropped.anchor_refused === null,
        'drop anchor: no anchor in the page or its link');
}

try {
  await openPage(page, baseUrl);
  await anchorChecks();
  check(errors.length === 0, `no console errors (${errors.slice(0, 3).join(' | ')})`);
} catch (error) {
  check(false, `test ran to the end: ${error.stack}`);
} finally {
  await close();
  server.close();
}
finish('web_anchor');
