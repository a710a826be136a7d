// browser.mjs SPEC.json - profil report --html pages in a real browser:
// Debian's chromium, headless, driven by playwright-core.  SPEC lists
// pages, each with the csv reports (`profil report --format csv` and
// `--lines --format csv`) of the same files, which say what the page
// must show.  Prints one line per check; exits 1 if any failed.
import { launch } from './chromium.mjs';
import { readFileSync, writeFileSync } from 'node:fs';

const spec = JSON.parse(readFileSync(process.argv[2], 'utf8'));
let failed = 0;
function check(ok, what) {
	console.log((ok ? 'ok:     ' : 'not ok: ') + what);
	if (!ok) failed++;
}

// The csv the command writes (quotes only around fields that need them).
function csv(path) {
	const rows = [];
	for (const line of readFileSync(path, 'utf8').split('\n')) {
		if (!line) continue;
		const f = [];
		let cur = '', q = false;
		for (let i = 0; i < line.length; i++) {
			const c = line[i];
			if (q && c === '"' && line[i + 1] === '"') { cur += '"'; i++; }
			else if (c === '"') q = !q;
			else if (c === ',' && !q) { f.push(cur); cur = ''; }
			else cur += c;
		}
		f.push(cur);
		rows.push(f);
	}
	const head = rows.shift();
	return rows.map((r) => Object.fromEntries(head.map((h, i) => [h, r[i]])));
}
const base = (p) => p.slice(p.lastIndexOf('/') + 1);

const browser = await launch();
const ctx = browser.ctx;
const errors = [];
const requests = [];
ctx.on('request', (r) => { if (!r.url().startsWith('file:') && !r.url().startsWith('data:')) requests.push(r.url()); });

// The names of the rows on screen, in order.
const visible = (page) => page.$$eval('#fnlist .r', (rs) => rs.map((r) => ({
	name: r.querySelector('.name').textContent,
	samples: +r.children[2].textContent,
	obj: r.querySelector('.obj').textContent,
})));

async function clickFunction(page, name) {
	await page.fill('#filter', name);
	const exact = new RegExp('^' + name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') + '$');
	// A locator, found again if the list is redrawn under it.
	await page.locator('#fnlist .r .name', { hasText: exact }).first().click();
	await page.waitForFunction((n) => document.getElementById('fn-name')?.textContent === n, name);
}

// The hottest line the text report names for a function.
function hottestLine(lines, fn) {
	const r = lines.find((x) => x.function === fn);
	return r ? r.file + ':' + r.line : null;
}

async function hottestShown(page) {
	return page.$eval('.src .l.hottest', (e) => e.dataset.file + ':' + e.dataset.line).catch(() => null);
}

// Pixel variance of a screenshot, decoded by the browser itself.
async function variance(png) {
	const p = await ctx.newPage();
	const v = await p.evaluate(async (b64) => {
		const img = new Image();
		img.src = 'data:image/png;base64,' + b64;
		await img.decode();
		const c = document.createElement('canvas');
		c.width = img.width; c.height = img.height;
		const g = c.getContext('2d');
		g.drawImage(img, 0, 0);
		const d = g.getImageData(0, 0, c.width, c.height).data;
		let s = 0, s2 = 0, n = 0;
		for (let i = 0; i < d.length; i += 4) {
			const y = 0.299 * d[i] + 0.587 * d[i + 1] + 0.114 * d[i + 2];
			s += y; s2 += y * y; n++;
		}
		const mean = s / n;
		return { variance: s2 / n - mean * mean, width: c.width, height: c.height };
	}, png.toString('base64'));
	await p.close();
	return v;
}

// The flame graph's frames: name, function id, node, x and width in px.
const frames = (page) => page.$$eval('#flame .fr', (rs) => rs.map((r) => ({
	name: r.dataset.name, fn: +r.dataset.fn, node: +r.dataset.node,
	x: r.offsetLeft, w: r.getBoundingClientRect().width, cls: r.className })));
const same = (a, b, tol) => Math.abs(a - b) <= tol;

async function flameChecks(page, t) {
	const fl = t.flame, name = base(t.html);
	// The table's total column is the text report's, row for row.
	const rows = csv(t.csv);
	const tot = await page.$$eval('#fnlist .r', (rs) => rs.map((r) => [r.querySelector('.name').textContent, r.children[3].textContent]));
	check(tot.length > 0 && tot.length <= rows.length && tot.every(([n, p], k) => n === rows[k].function && p === rows[k].total_percent + '%'),
		`${name}: total % column ${tot.map((x) => x.join(' ')).join(', ')} as the report's`);
	let fr = await frames(page);
	const root = fr.find((f) => f.node === 0);
	check(root && fr.length > 1, `${name}: a flame graph of ${fr.length} frames, root ${root?.w}px wide`);
	if (!root) return;
	const W = root.w;
	// Samples with stacks: given, or (a real run) as the root says.
	fl.samples = fl.samples || +(await page.$eval('#flame .fr[data-node="0"]', (e) => e.title)).match(/: (\d+) samples/)[1];
	const ctol = fl.ctol !== undefined ? fl.ctol : 0.01 + 100 * (fl.tol || 0);
	// Each function's frames are as wide as its share of the samples: the
	// sum over its frames (none recursive), within tol of the share
	// (sampling error, from the spec) and a pixel a frame.
	for (const k of fl.known) {
		const mine = fr.filter((f) => f.name === k.name);
		const w = mine.reduce((s, f) => s + f.w, 0);
		const want = W * k.total / fl.samples;
		check(mine.length > 0 && same(w, want, mine.length * 1.5 + W * (fl.tol || 0)),
			`${name}: ${k.name}: ${mine.length} frames ${w.toFixed(1)}px wide, its share ${(100 * k.total / fl.samples).toFixed(2)}% is ${want.toFixed(1)}px`);
	}
	// Search: every frame of a matching function highlighted, no other;
	// the share matched said.
	await page.fill('#fgsearch', fl.search.text);
	await page.waitForFunction(() => document.getElementById('fgmatch').textContent.startsWith('matched'));
	fr = await frames(page);
	const q = fl.search.text.toLowerCase();
	const lit = fr.filter((f) => f.cls.includes('match'));
	check(lit.length > 0 && fr.every((f) => f.node === 0 || f.cls.includes('match') === f.name.toLowerCase().includes(q)),
		`${name}: search "${fl.search.text}" highlights ${lit.length} frames, exactly those that match`);
	const said = await page.$eval('#fgmatch', (e) => e.textContent);
	const share = +said.match(/matched ([\d.]+)%/)?.[1];
	const wantShare = fl.search.share ?? 100 * fl.known.find((k) => k.name === fl.search.name).total / fl.samples;
	check(same(share, wantShare, 0.01 + 100 * (fl.tol || 0)), `${name}: "${said}", expected ${wantShare.toFixed(2)}%`);
	await page.fill('#fgsearch', '');
	await page.waitForFunction(() => !document.getElementById('fgmatch').textContent.startsWith('matched'));
	// Zoom: a click on a frame makes it the root, full width, and shows
	// its function in the detail pane; reset goes back.
	const z = fr.find((f) => f.name === fl.zoom.name);
	await page.click(`#flame .fr[data-node="${z.node}"]`);
	await page.waitForFunction((n) => document.getElementById('fn-name')?.textContent === n, fl.zoom.name)
		.catch(() => {});
	fr = await frames(page);
	const zf = fr.find((f) => f.cls.includes('zoomed'));
	check(zf && zf.name === fl.zoom.name && same(zf.w, W, 1.5), `${name}: a click zooms to ${zf?.name}, ${zf?.w}px wide`);
	check(await page.$eval('#fn-name', (e) => e.textContent).catch(() => '') === fl.zoom.name,
		`${name}: the click shows ${fl.zoom.name} in the detail pane`);
	const inner = fr.filter((f) => f.name === fl.zoom.callee);
	const iw = inner.reduce((s, f) => s + f.w, 0), iwant = W * fl.zoom.share;
	check(inner.length > 0 && same(iw, iwant, 1.5 * inner.length + W * (fl.zoom.tol ?? fl.tol ?? 0)),
		`${name}: zoomed, ${fl.zoom.callee} is ${iw.toFixed(1)}px of ${W}, expected ${iwant.toFixed(1)}`);
	check(fr.some((f) => f.cls.includes('anc')), `${name}: zoomed, its callers shown above it`);
	await page.click('#fgreset');
	fr = await frames(page);
	check(!fr.some((f) => f.cls.includes('zoomed') || f.cls.includes('anc')) &&
		same(fr.find((f) => f.name === fl.zoom.name).w, W * fl.zoom.total / fl.samples, 1.5 + W * (fl.tol || 0)),
		`${name}: reset zoom shows every stack again`);
	// Callers and callees with their shares (of the samples with the
	// function in their stack, each edge counted once a sample, however
	// often the function recurs), each a link to its entry.
	const side = (cls) => page.$$eval('#detail .fgedges .r.' + cls, (rs) => rs.map((r) => ({
		name: r.querySelector('.name').textContent.trim(), share: parseFloat(r.children[0].textContent),
		samples: +r.children[1].textContent })));
	for (const cc of fl.callers) {
		// by its widest frame: it may have no row (no samples of its own)
		await page.click(`#flame .fr[data-name="${cc.function}"]`);
		await page.waitForFunction((n) => document.getElementById('fn-name')?.textContent === n, cc.function);
		if (await page.$eval('#fgreset', (b) => !b.disabled)) await page.click('#fgreset');
		for (const [cls, what, list] of [['fgcaller', 'called by', cc.callers], ['fgcallee', 'calls', cc.callees || []]]) {
			const got = await side(cls);
			for (const c of list) {
				const x = got.find((y) => y.name === c.name);
				check(x && same(x.share, c.share, ctol),
					`${name}: ${cc.function} ${what} ${c.name}: ${x?.share}% of its samples, expected ${c.share.toFixed(2)}%`);
			}
			if (list.length)
				check(got.length === list.length, `${name}: ${cc.function} ${what} ${got.map((c) => c.name).join(', ')}`);
		}
	}
	const cc = fl.callers[0];
	await clickFunction(page, cc.function);
	const callers = await side('fgcaller');
	const first = cc.callers[0].name;
	await page.click(`#detail .fgedges .r.fgcaller[data-fn] >> text=${first}`);
	await page.waitForFunction((n) => document.getElementById('fn-name')?.textContent === n, first);
	const back = await side('fgcallee');
	const edge = back.find((x) => x.name === cc.function);
	check(edge && edge.samples === callers.find((x) => x.name === first).samples,
		`${name}: clicking ${first} shows its entry, which calls ${cc.function} in ${edge?.samples} samples`);
	// Another process: its own stacks.
	if (fl.proc) {
		await page.selectOption('#proc', String(fl.proc.index));
		await page.waitForFunction((n) => document.querySelector('#flame .fr[data-node="0"]')?.title.includes(': ' + n + ' samples'), fl.proc.samples)
			.catch(() => {});
		fr = await frames(page);
		const all = fr.find((f) => f.node === 0), full = fr.find((f) => f.name === fl.proc.full);
		check(all && full && same(full.w, all.w, 1.5) && !fr.some((f) => f.name === fl.proc.absent),
			`${name}: process ${fl.proc.index}: its flame graph, ${fl.proc.full} ${full?.w}px of ${all?.w}, no ${fl.proc.absent}`);
		await page.selectOption('#proc', '0');
	}
}

for (const t of spec.pages) {
	const page = await ctx.newPage();
	page.on('pageerror', (e) => errors.push(t.html + ': ' + e.message));
	page.on('console', (m) => { if (m.type() === 'error') errors.push(t.html + ': ' + m.text()); });
	await page.goto('file://' + t.html);
	await page.waitForSelector('#fnlist .r');
	const rows = csv(t.csv), lines = csv(t.lines);

	// The table, hottest first, as the text report.
	let v = await visible(page);
	check(v.length > 0 && v[0].name === rows[0].function && v[0].samples === +rows[0].samples,
		`${base(t.html)}: top function ${v[0]?.name} (${v[0]?.samples}), report says ${rows[0].function} (${rows[0].samples})`);
	const total = await page.$eval('#shown', (e) => e.textContent);
	check(total.endsWith(' ' + rows.length + ' functions'), `${base(t.html)}: ${total}, report has ${rows.length} rows`);

	// The header's command line: each argument, quoted as a shell would.
	if (t.command) {
		const c = await page.$eval('#h-command', (e) => e.textContent);
		check(c === t.command, `${base(t.html)}: command line shown ${c}, run as ${t.command}`);
	}

	// Each function asked for: its source view's hottest line is the one
	// report --lines names first for it.
	for (const fn of t.functions) {
		await clickFunction(page, fn);
		const want = hottestLine(lines, fn), got = await hottestShown(page);
		check(want && got === want, `${base(t.html)}: ${fn}: hottest line shown ${got}, report --lines says ${want}`);
		const text = await page.$eval('.src .l.hottest .t', (e) => e.textContent).catch(() => '');
		check(/\S/.test(text.replace('hottest', '')), `${base(t.html)}: ${fn}: its hottest line shows source text "${text.trim().slice(0, 50)}"`);
	}
	if (t.inlined) {
		const n = await page.$$eval('#detail .badge', (bs) => bs.filter((b) => b.textContent.startsWith('inlined: ')).length);
		check(n > 0, `${base(t.html)}: ${t.functions.at(-1)}: ${n} lines marked as inlined`);
	}

	// Filter: exactly the functions whose name or object holds the text.
	const f = t.filter.toLowerCase();
	const want = rows.filter((r) => r.function.toLowerCase().includes(f) || base(r.object).toLowerCase().includes(f)).length;
	await page.fill('#filter', t.filter);
	await page.waitForFunction((n) => document.getElementById('shown').textContent.startsWith(n + ' of '), want)
		.catch(() => {});
	const shown = await page.$eval('#shown', (e) => e.textContent);
	v = await visible(page);
	check(shown.startsWith(want + ' of ') && want > 0, `${base(t.html)}: filter "${t.filter}": ${shown}, report has ${want}`);
	check(v.length === Math.min(want, v.length) && v.every((r) => (r.name + r.obj).toLowerCase().includes(f)),
		`${base(t.html)}: filter "${t.filter}": every row shown matches`);
	await page.fill('#filter', '');
	await page.waitForFunction((n) => document.getElementById('shown').textContent.startsWith(n + ' of'), rows.length);

	// Sort by name, both ways, then back by samples.
	const sorted = (a, k, d) => a.every((x, i) => i === 0 || d * (a[i - 1][k] < x[k] ? -1 : a[i - 1][k] > x[k] ? 1 : 0) <= 0);
	await page.click('#fnhead button[data-sort=name]');
	v = await visible(page);
	check(v.length > 1 && sorted(v, 'name', 1), `${base(t.html)}: sorted by name: ${v.slice(0, 3).map((r) => r.name).join(', ')}`);
	await page.click('#fnhead button[data-sort=name]');
	v = await visible(page);
	check(sorted(v, 'name', -1), `${base(t.html)}: sorted by name, descending: ${v.slice(0, 3).map((r) => r.name).join(', ')}`);
	await page.click('#fnhead button[data-sort=count]');
	v = await visible(page);
	check(sorted(v, 'samples', -1) && v[0].name === rows[0].function, `${base(t.html)}: sorted by samples again`);

	// The keyboard: Home selects the first row, the down arrow the next.
	await page.focus('#fnlist');
	await page.keyboard.press('Home');
	await page.waitForFunction((n) => document.getElementById('fn-name')?.textContent === n, rows[0].function);
	await page.keyboard.press('ArrowDown');
	const second = await page.waitForFunction((n) => document.getElementById('fn-name')?.textContent === n, rows[1].function)
		.then(() => true, () => false);
	check(second, `${base(t.html)}: Home, then the down arrow, shows ${rows[1].function}`);

	// Another process: its table is that file's report.
	if (t.process) {
		const opts = await page.$$eval('#proc option', (os) => os.map((o) => o.textContent));
		check(opts.length === t.process.count + 1, `${base(t.html)}: selector offers ${opts.join(' | ')}`);
		const k = opts.findIndex((o) => o.startsWith(t.process.label));
		await page.selectOption('#proc', String(k));
		const one = csv(t.process.csv);
		await page.waitForFunction((n) => document.getElementById('shown').textContent.endsWith(' ' + n + ' functions'), one.length);
		v = await visible(page);
		check(k > 0 && v[0].name === one[0].function && v[0].samples === +one[0].samples,
			`${base(t.html)}: process ${opts[k]}: top ${v[0].name} (${v[0].samples}), its report says ${one[0].function} (${one[0].samples})`);
		const pid = await page.$eval('#summary', (e) => e.textContent);
		check(pid.includes(t.process.pid), `${base(t.html)}: the header names pid ${t.process.pid}`);
		if (t.functions.length) {
			await clickFunction(page, t.functions[0]);
			const want1 = hottestLine(csv(t.process.lines), t.functions[0]);
			check(await hottestShown(page) === want1, `${base(t.html)}: process ${opts[k]}: ${t.functions[0]}: hottest line ${want1}`);
		}
	}

	// gmon.out's call graph: the function's callers and callees with
	// their counts, each a link to its own entry.
	if (t.graph) {
		const gr = t.graph;
		await clickFunction(page, gr.function);
		const side = (cls) => page.$$eval('#detail .graph .r.' + cls, (rs) => rs.map((r) => ({
			name: r.querySelector('.name').textContent.trim(), calls: r.children[0].textContent })));
		const callers = await side('caller'), callees = await side('callee');
		const calls = +rows.find((r) => r.function === gr.function).calls;
		const count = (list, n) => { const x = list.find((c) => c.name === n); return x ? +x.calls.split('/')[0] : 0; };
		const [a, b] = gr.ratio;
		const ca = count(callers, a.name), cb = count(callers, b.name);
		check(ca + cb === calls && ca === a.times * cb && cb > 0,
			`${base(t.html)}: ${gr.function}'s callers ${JSON.stringify(callers)}: ${a.name} ${a.times} times ${b.name}, ${calls} calls in all`);
		check(callers.every((c) => c.calls.endsWith('/' + calls)), `${base(t.html)}: callers' counts out of ${calls}`);
		check(count(callees, gr.callee) === calls, `${base(t.html)}: ${gr.function} calls ${gr.callee} ${count(callees, gr.callee)} times, once a call`);
		await page.click(`#detail .graph .r.caller[data-fn] >> text=${a.name}`);
		await page.waitForFunction((n) => document.getElementById('fn-name')?.textContent === n, a.name);
		const back = await side('callee');
		check(count(back, gr.function) === ca, `${base(t.html)}: clicking ${a.name} shows its entry, which calls ${gr.function} ${count(back, gr.function)} times`);
		if (gr.spontaneous) {
			await clickFunction(page, gr.spontaneous);
			const sp = await side('caller');
			check(sp.some((c) => c.name === '<spontaneous>' && +c.calls.split('/')[0] > 0),
				`${base(t.html)}: ${gr.spontaneous} has a <spontaneous> caller: ${JSON.stringify(sp)}`);
		}
	}

	// The flame graph of a profile with stacks: frames as wide as their
	// totals, search, zoom, click through; callers and callees from the
	// stacks in the detail pane.  Or, without stacks, one line that says
	// why and no graph.
	if (t.flame) await flameChecks(page, t);
	if (t.noflame) {
		const why = await page.$eval('#fgwhy', (e) => e.hidden ? '' : e.textContent);
		const frames = await page.$$eval('#flame .fr', (rs) => rs.length);
		check(why.startsWith('No flame graph: ') && !why.includes('\n') && frames === 0 &&
			await page.$eval('#fgtools', (e) => e.hidden),
			`${base(t.html)}: no flame graph, and one line says why: "${why}"`);
	}

	// A screenshot that is not blank.
	const png = await page.screenshot();
	if (t.screenshot) writeFileSync(t.screenshot, png);
	const s = await variance(png);
	check(s.width === 1400 && s.variance > 200, `${base(t.html)}: screenshot ${s.width}x${s.height}, pixel variance ${s.variance.toFixed(0)}`);
	await page.close();
}
check(errors.length === 0, 'no error in the pages' + (errors.length ? ': ' + errors.join('; ') : ''));
check(requests.length === 0, 'nothing fetched from the network' + (requests.length ? ': ' + requests.join(' ') : ''));
await browser.close();
process.exit(failed ? 1 : 0);
