// SPDX-License-Identifier: Apache-2.0
// tests/bridge/html/check_html.js: the page `tracewire show --html` writes, in a real browser
// (Debian's Chromium, driven by playwright-core over the DevTools protocol; run_html_test.sh
// sets it up). Usage: node check_html.js CHROMIUM OUTDIR BIG_PAGE BIG_SPANS REAL_PAGE REAL_SPANS
// KNOWN_PAGE SPLIT_PAGE
//
// Checks: every page loads from disk (file://) with no console error, no page error and no
// request of any kind beyond the file itself; every span of the 1,000-span page and of the real
// SmartThings page is a row and is displayed; collapsing a subtree hides its rows and keeps them
// in the document; the search finds any span (by operation, by span id, by tag value), also
// inside a collapsed subtree, which it opens; the detail pane shows a span's tags, logs,
// references and process; references of a trace the window split into sections go to their span
// in whichever section holds it, with no page error; each of its sections has an id of its own and
// a contents entry ("part N of M") that goes to it. Writes OUTDIR/known-trace.png (a screenshot of
// a known trace) and OUTDIR/big-trace.png. Exit status 0 when every check passed, 1 otherwise.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { chromium } = require('playwright-core');

const [chromiumPath, outDir, bigPage, bigSpans, realPage, realSpans, knownPage, splitPage] =
  process.argv.slice(2);
let passed = 0;
let failed = 0;
function check(name, ok, detail) {
  if (ok) {
    passed++;
    console.log('PASS: ' + name);
  } else {
    failed++;
    console.log('FAIL: ' + name + (detail !== undefined ? '\n  ' + JSON.stringify(detail) : ''));
  }
}

async function open(context, file) {
  const page = await context.newPage();
  const problems = [];
  const requests = [];
  page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') problems.push(m.type() + ': ' + m.text()); });
  page.on('pageerror', (e) => problems.push('pageerror: ' + e.message));
  page.on('request', (r) => { if (!r.url().startsWith('file://')) requests.push(r.url()); });
  const url = 'file://' + path.resolve(file);
  await page.goto(url, { waitUntil: 'load' });
  await page.waitForFunction(() => document.getElementById('tw-count').textContent !== '');
  return { page, problems, requests };
}

// Rows displayed (not display:none anywhere up the tree) and rows in the document.
async function rowCounts(page) {
  return page.evaluate(() => {
    const rows = Array.from(document.querySelectorAll('.tw-row[data-k]'));
    return { total: rows.length, shown: rows.filter((r) => r.offsetParent !== null).length };
  });
}

async function main() {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'tw-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath,
    headless: true,
    viewport: { width: 1400, height: 820 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    // ---- the 1,000-span page -------------------------------------------------------------
    const big = await open(context, bigPage);
    const page = big.page;
    check('the 1,000-span page loads from disk without console errors', big.problems.length === 0, big.problems);
    let c = await rowCounts(page);
    check('every span of the 1,000-span trace is a displayed row', c.total === +bigSpans && c.shown === +bigSpans, c);
    check('the count says so', (await page.textContent('#tw-count')) === bigSpans + ' spans');
    await page.screenshot({ path: path.join(outDir, 'big-trace.png') });

    // collapse the root's second child (op-0002): its subtree hides, nothing leaves the page
    const target = page.locator('.tw-row[data-k]', { hasText: 'op-0002' }).first();
    const before = await page.evaluate(() => document.querySelectorAll('.tw-row').length);
    await target.locator('.tw-tog').click();
    c = await rowCounts(page);
    const after = await page.evaluate(() => document.querySelectorAll('.tw-row').length);
    const hiddenInside = await page.evaluate(() => {
      const rows = Array.from(document.querySelectorAll('.tw-row[data-k]'));
      const i = rows.findIndex((r) => r.textContent.includes('op-0002'));
      const d = +rows[i].dataset.depth;
      let n = 0, hidden = 0;
      for (let j = i + 1; j < rows.length && +rows[j].dataset.depth > d; j++) {
        n++;
        if (rows[j].offsetParent === null && rows[j].classList.contains('tw-hidden')) hidden++;
      }
      return { n, hidden, collapsed: rows[i].offsetParent !== null };
    });
    check('collapsing a subtree hides every row below it', hiddenInside.n > 100 && hiddenInside.hidden === hiddenInside.n && hiddenInside.collapsed, hiddenInside);
    check('...and removes none from the document', before === after && c.total === +bigSpans && c.shown === +bigSpans - hiddenInside.n, { before, after, c });

    // search inside the collapsed subtree: the match shows, its ancestors open
    const inside = await page.evaluate(() => {
      const rows = Array.from(document.querySelectorAll('.tw-row[data-k]'));
      const hidden = rows.filter((r) => r.classList.contains('tw-hidden'));
      return hidden[hidden.length - 1].querySelector('.tw-op').textContent;
    });
    await page.fill('#tw-search', inside);
    const found = await page.evaluate((op) => {
      const rows = Array.from(document.querySelectorAll('.tw-row.tw-match'));
      return rows.map((r) => ({ op: r.querySelector('.tw-op').textContent, shown: r.offsetParent !== null }));
    }, inside);
    check('the search finds a span inside a collapsed subtree and shows it: ' + inside,
      found.length === 1 && found[0].op === inside && found[0].shown, found);
    check('...and says how many match', (await page.textContent('#tw-count')) === '1 of ' + bigSpans + ' spans match');

    // any span: by span id and by a tag value, for a spread of spans
    const spans = await page.evaluate(() => JSON.parse(document.getElementById('tw-data-0').textContent).spans);
    let misses = [];
    for (let k = 0; k < spans.length; k += 37) {
      const s = spans[k];
      await page.fill('#tw-search', s.span_id);
      const ok = await page.evaluate((id) => {
        const row = document.querySelector('.tw-row[id$="-' + id + '"]');
        return row && row.classList.contains('tw-match') && row.offsetParent !== null;
      }, s.span_id);
      if (!ok) misses.push(s.span_id);
    }
    await page.fill('#tw-search', 'span.index=777');
    const byTag = await page.evaluate(() => Array.from(document.querySelectorAll('.tw-row.tw-match')).map((r) => r.querySelector('.tw-op').textContent));
    check('the search finds any span by its id (' + Math.ceil(spans.length / 37) + ' tried)', misses.length === 0, misses);
    check('...and by a tag', byTag.length === 1 && byTag[0] === 'op-0777', byTag);
    await page.fill('#tw-search', '');
    await page.keyboard.press('Escape');

    // the detail pane: tags, logs, references (a parent reference from Zipkin's parentId is
    // not kept as a reference; the OTLP fixture below has links), process
    await page.locator('.tw-row[data-k]', { hasText: 'op-0005' }).first().click();
    const detail = await page.textContent('#tw-detail');
    check('the detail pane shows the tags, logs and process of a clicked span',
      detail.includes('span.index') && detail.includes('5') && detail.includes('checkpoint-5') &&
      detail.includes('Process') && detail.includes('10.0.0.') && detail.includes('op-0005'), detail.slice(0, 400));
    check('the 1,000-span page made no network request', big.requests.length === 0, big.requests);
    await page.close();

    // ---- the real SmartThings trace ------------------------------------------------------
    const real = await open(context, realPage);
    check('the real SmartThings page loads without console errors', real.problems.length === 0, real.problems);
    c = await rowCounts(real.page);
    check('every span of the real trace is a displayed row (' + realSpans + ')', c.total === +realSpans && c.shown === +realSpans, c);
    check('the real page made no network request', real.requests.length === 0, real.requests);
    await real.page.close();

    // ---- a known trace: references and the screenshot ------------------------------------
    const known = await open(context, knownPage);
    check('the known trace loads without console errors', known.problems.length === 0, known.problems);
    const withRefs = await known.page.evaluate(() => {
      const data = JSON.parse(document.getElementById('tw-data-0').textContent);
      const k = data.spans.findIndex((s) => s.refs.length > 0);
      return k < 0 ? null : { k, ref: data.spans[k].refs[0].span_id };
    });
    if (withRefs) {
      await known.page.locator('.tw-row[data-k="' + withRefs.k + '"]').click();
      const d = await known.page.textContent('#tw-detail');
      check('the detail pane shows a span\'s references', d.includes('References') && d.includes(withRefs.ref), d.slice(0, 400));
    } else {
      check('the known trace has a span with references', false);
    }
    await known.page.locator('.tw-row[data-k]').nth(1).click();
    await known.page.screenshot({ path: path.join(outDir, 'known-trace.png') });
    check('a screenshot of the known trace was written', fs.statSync(path.join(outDir, 'known-trace.png')).size > 10000);
    await known.page.close();

    // ---- a trace the window split: references inside a part and across parts ------------
    // Each part is a section of its own; a reference whose span is in another part (or not on
    // the page) must not throw: a link goes to the span wherever the page holds it.
    const split = await open(context, splitPage);
    const refs = await split.page.evaluate(() => {
      const out = [];
      const sections = document.querySelectorAll('section.tw-trace');
      sections.forEach((sec, n) => {
        const data = JSON.parse(document.getElementById('tw-data-' + n).textContent);
        const here = new Set(data.spans.map((s) => s.span_id));
        data.spans.forEach((s, k) => s.refs.forEach((r) => {
          out.push({ n, k, span: s.span_id, target: r.span_id, inside: here.has(r.span_id) });
        }));
      });
      return { sections: sections.length, refs: out };
    });
    check('the split trace is in ' + refs.sections + ' sections, with references inside a section and across sections',
      refs.sections >= 2 && refs.refs.some((r) => r.inside) && refs.refs.some((r) => !r.inside), refs);
    const wrong = [];
    for (const r of refs.refs) {
      await split.page.locator('section[data-trace="' + r.n + '"] .tw-row[data-k="' + r.k + '"]').click();
      const pane = await split.page.textContent('#tw-detail');
      const link = split.page.locator('#tw-detail a', { hasText: r.target });
      if (!pane.includes(r.target)) {
        wrong.push({ r, why: 'the detail pane does not name the target', pane: pane.slice(0, 300) });
        continue;
      }
      if ((await link.count()) === 0) continue;
      await link.first().click();
      const selected = await split.page.evaluate(() => {
        const row = document.querySelector('.tw-row.tw-selected');
        return row ? { id: row.id, shown: row.offsetParent !== null } : null;
      });
      if (!selected || !selected.id.endsWith('-' + r.target) || !selected.shown)
        wrong.push({ r, why: 'the link did not select the target', selected });
    }
    check('every reference of the split trace names its span, and its link selects it (' + refs.refs.length + ' tried)',
      wrong.length === 0, wrong);
    // the table of contents: a row per section, each linking to its own section
    const toc = await split.page.evaluate(() => ({
      sections: Array.from(document.querySelectorAll('section.tw-trace')).map((s) => s.id),
      links: Array.from(document.querySelectorAll('nav.tw-toc a')).map((a) => ({
        href: a.getAttribute('href'), text: a.textContent })),
    }));
    check('each section of the split trace has an id of its own and a contents entry linking to it',
      toc.sections.length === refs.sections && new Set(toc.sections).size === toc.sections.length &&
      toc.links.length === toc.sections.length &&
      toc.links.every((l, i) => l.href === '#' + toc.sections[i] &&
        l.text.endsWith('(part ' + (i + 1) + ' of ' + toc.sections.length + ')')), toc);
    const missed = [];
    for (let i = toc.links.length - 1; i >= 0; i--) {
      await split.page.locator('nav.tw-toc a').nth(i).click();
      const at = await split.page.evaluate(() => ({ hash: location.hash,
        target: document.querySelector(':target') ? document.querySelector(':target').id : null }));
      if (at.hash !== toc.links[i].href || at.target !== toc.sections[i]) missed.push({ i, at });
    }
    check('...and a click on each entry goes to its part', missed.length === 0, missed);
    check('...with no page error', split.problems.length === 0, split.problems);
    await split.page.close();
  } finally {
    await context.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
  console.log(passed + ' passed, ' + failed + ' failed');
  process.exit(failed ? 1 : 0);
}

main().catch((e) => {
  console.log('FAIL: ' + (e && e.stack ? e.stack : e));
  process.exit(1);
});
