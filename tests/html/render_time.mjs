// render_time.mjs PAGE FILTER - how long chromium takes to show a page of
// profil report --html (for bench/html.sh, not a test): first render
// (the page's own mark, from the start of navigation), a click on the
// hottest function until its view is there, a filter until the table is
// redrawn, and scrolling the table to its end.  The median of 3 loads.
import { chromium } from 'playwright-core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [page_, filter] = process.argv.slice(2);
const profile = mkdtempSync(join(tmpdir(), 'profil-chromium-'));
const ctx = await chromium.launchPersistentContext(profile, {
	executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
	headless: true,
	args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
		'--disable-background-networking', '--disable-component-update', '--disable-sync'],
	viewport: { width: 1400, height: 900 },
});
const runs = [];
for (let k = 0; k < 3; k++) {
	const page = await ctx.newPage();
	await page.goto('file://' + page_, { timeout: 120000 });
	await page.waitForFunction(() => window.profilRendered !== undefined, null, { timeout: 120000 });
	const first = await page.evaluate(() => window.profilRendered);
	const rows = await page.$$eval('#fnlist .r', (r) => r.length);
	let t = Date.now();
	await page.click('#fnlist .r');
	await page.waitForSelector('#fn-name');
	const click = Date.now() - t;
	t = Date.now();
	await page.fill('#filter', filter);
	await page.waitForFunction((f) => document.getElementById('shown').textContent !== '' &&
		[...document.querySelectorAll('#fnlist .r .name')].every((e) => e.textContent.includes(f)), filter);
	const filt = Date.now() - t;
	t = Date.now();
	await page.$eval('#fnlist', (e) => { e.scrollTop = e.scrollHeight; });
	await page.waitForTimeout(50);
	const scroll = Date.now() - t - 50;
	const shown = await page.$eval('#shown', (e) => e.textContent);
	runs.push({ first, click, filt, scroll, rows, shown });
	await page.close();
}
await ctx.close();
rmSync(profile, { recursive: true, force: true });
const med = (k) => runs.map((r) => r[k]).sort((a, b) => a - b)[1];
console.log(`first render ${med('first').toFixed(0)} ms (runs: ${runs.map((r) => r.first.toFixed(0)).join(', ')}); ` +
	`click ${med('click')} ms; filter ${med('filt')} ms (${runs[0].shown}); scroll to end ${med('scroll')} ms; ` +
	`${runs[0].rows} rows in the document`);
