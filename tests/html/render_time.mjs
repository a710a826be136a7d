// render_time.mjs PAGE FILTER - how long chromium takes to show a page of
// profil report --html (for bench/html.sh, not a test): first render
// (the page's own mark, from the start of navigation), a click on the
// hottest function until its view is there, scrolling the table to its
// end, and a filter until the table is redrawn.  The median of 3 loads.
import { launch } from './chromium.mjs';

const [page_, filter] = process.argv.slice(2);
const browser = await launch();
const ctx = browser.ctx;
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
	await page.$eval('#fnlist', (e) => { e.scrollTop = e.scrollHeight; });
	await page.waitForTimeout(50);
	const scroll = Date.now() - t - 50;
	t = Date.now();
	const before = await page.$eval('#shown', (e) => e.textContent);
	await page.fill('#filter', filter);
	await page.waitForFunction((b) => document.getElementById('shown').textContent !== b, before);
	const filt = Date.now() - t;
	const shown = await page.$eval('#shown', (e) => e.textContent);
	let search = -1, zoom = -1, frames = 0;
	if (await page.$eval('#flame', (e) => !e.hidden)) {
		frames = await page.$$eval('#flame .fr', (r) => r.length);
		t = Date.now();
		await page.fill('#fgsearch', filter);
		await page.waitForFunction(() => document.getElementById('fgmatch').textContent.startsWith('matched'));
		search = Date.now() - t;
		await page.fill('#fgsearch', '');
		const node = await page.$$eval('#flame .fr', (r) => r[Math.min(r.length - 1, 3)].dataset.node);
		t = Date.now();
		await page.click(`#flame .fr[data-node="${node}"]`);
		await page.waitForSelector(`#flame .fr.zoomed[data-node="${node}"]`);
		zoom = Date.now() - t;
	}
	runs.push({ first, click, filt, scroll, rows, shown, search, zoom, frames });
	await page.close();
}
await browser.close();
const med = (k) => runs.map((r) => r[k]).sort((a, b) => a - b)[1];
console.log(`first render ${med('first').toFixed(0)} ms (runs: ${runs.map((r) => r.first.toFixed(0)).join(', ')}); ` +
	`click ${med('click')} ms; filter ${med('filt')} ms (${runs[0].shown}); scroll to end ${med('scroll')} ms; ` +
	`${runs[0].rows} rows in the document` +
	(runs[0].frames ? `; flame graph: ${runs[0].frames} frames drawn, search ${med('search')} ms, zoom ${med('zoom')} ms` : ''));
