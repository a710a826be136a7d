/* page.js - the behaviour of profil report --html.
 *
 * The data (html_data.c) is columns of numbers and indices into one
 * string table.  Only the rows on screen exist in the document (VList):
 * a hundred thousand functions or a million addresses cost no more to
 * show than twenty.  Nothing is fetched: the page works from disk. */
'use strict';
(function () {
	const D = JSON.parse(document.getElementById('profil-data').textContent);
	const S = D.strings;
	const ROW = 22;
	const $ = (id) => document.getElementById(id);
	const state = { proc: 0, sort: 'count', dir: -1, filter: '', fn: -1 };
	let P = null;		/* the process shown */
	let order = null;	/* its functions, filtered and sorted */
	let fnList = null;
	let flame = null;	/* flame.js: the flame graph, and callers from stacks */

	function el(tag, cls, text) {
		const e = document.createElement(tag);
		if (cls) e.className = cls;
		if (text !== undefined) e.textContent = text;
		return e;
	}
	function base(path) {
		const i = path.lastIndexOf('/');
		return i < 0 ? path : path.slice(i + 1);
	}
	function pct(x, total) { return total ? (100 * x / total).toFixed(2) + '%' : '-'; }
	function secs(n) { return (n * P.head.each_s).toFixed(3); }

	/* One hue, light to dark: ColorBrewer's Blues, safe for every kind
	 * of colour blindness (no red against green). */
	const BLUES = [[247, 251, 255], [222, 235, 247], [198, 219, 239], [158, 202, 225],
		[107, 174, 214], [66, 146, 198], [33, 113, 181], [8, 81, 156], [8, 48, 107]];
	function shade(t) {
		t = Math.max(0, Math.min(1, t)) * (BLUES.length - 1);
		const i = Math.min(BLUES.length - 2, Math.floor(t)), f = t - i;
		const c = BLUES[i].map((v, k) => Math.round(v + f * (BLUES[i + 1][k] - v)));
		return 'rgb(' + c.join(',') + ')';
	}
	function ink(t) { return t > 0.55 ? '#fff' : '#1f2328'; }

	/* Offsets and lookups of a process, made when it is first shown. */
	function prepare(p) {
		if (p.ready) return p;
		const n = p.fn.n.length;
		const prefix = (k) => {
			const a = new Float64Array(n + 1);
			for (let i = 0; i < n; i++) a[i + 1] = a[i] + k[i];
			return a;
		};
		p.lineAt = prefix(p.ln.k);
		for (let j = 1; j < p.ln.f.length; j++) {	/* differences, undone */
			p.ln.f[j] += p.ln.f[j - 1];
			p.ln.l[j] += p.ln.l[j - 1];
		}
		p.addrAt = prefix(p.ad.k);
		p.inlOf = new Map();
		for (let i = 0; i + 1 < p.inl.length; i += 2) p.inlOf.set(p.inl[i], p.inl[i + 1]);
		p.disOf = new Map();
		for (const d of p.dis) {	/* the page's text, the process's counts */
			const lines = D.dt[d[1]], counts = new Array(lines.length).fill(0);
			for (let k = 0; k + 1 < d[2].length; k += 2) counts[d[2][k]] = d[2][k + 1];
			p.disOf.set(d[0], [d[0], lines, counts]);
		}
		p.total = p.head.samples || 1;
		p.lower = null;
		p.ready = true;
		return p;
	}

	/* A list that makes only the rows on screen. */
	function VList(box, count, draw) {
		const space = box.querySelector('.vspace'), rows = box.querySelector('.vrows');
		let n = count, first = -1, last = -1;
		function paint(force) {
			const top = box.scrollTop, h = box.clientHeight || 400;
			const a = Math.max(0, Math.floor(top / ROW) - 10);
			const b = Math.min(n, Math.ceil((top + h) / ROW) + 10);
			if (!force && a === first && b === last) return;
			first = a; last = b;
			rows.style.transform = 'translateY(' + a * ROW + 'px)';
			const frag = document.createDocumentFragment();
			for (let i = a; i < b; i++) frag.appendChild(draw(i));
			rows.replaceChildren(frag);
		}
		box.addEventListener('scroll', () => paint(false), { passive: true });
		return {
			reset(k) { n = k; space.style.height = n * ROW + 'px'; box.scrollTop = 0; paint(true); },
			paint,
			scrollTo(i) {	/* only if row i is not in view already */
				const top = i * ROW;
				if (top < box.scrollTop || top + ROW > box.scrollTop + box.clientHeight)
					box.scrollTop = Math.max(0, top - box.clientHeight / 3);
				paint(true);
			},
		};
	}

	function summary() {
		const h = P.head, dl = $('summary');
		const add = (k, v, id) => {
			const d = el('div', k === 'program' || k === 'taken' ? 'wide' : ''), dt = el('dt', '', k), dd = el('dd', '', String(v));
			if (id) dd.id = id;
			dd.title = String(v);
			d.append(dt, dd);
			dl.appendChild(d);
		};
		dl.replaceChildren();
		const date = h.start_ms ? new Date(h.start_ms) : null;
		add('program', h.program, 'h-program');
		add('command', h.command || '-', 'h-command');
		if (h.pid > 0) add('pid', h.pid + (h.ppid > 0 ? ' (parent ' + h.ppid + ')' : ''));
		add('date', date ? date.toISOString().replace('T', ' ').replace(/\..*/, ' UTC') : '-');
		add('duration', h.end_ms > h.start_ms ? ((h.end_ms - h.start_ms) / 1000).toFixed(3) + ' s' : '-');
		add('backend', h.backend + (h.no_kernel ? ' (kernel time not seen)' : ''));
		add('rate', (h.hz_asked > h.hz ? h.hz_asked + ' Hz asked, ' + h.hz + ' Hz used (the backend\'s limit)'
			: h.hz + ' Hz asked') + (h.gmon ? '' : ', ' + h.observed_hz.toFixed(0) + ' observed'));
		add('samples', h.samples, 'h-samples');
		add('CPU time', h.cpu_s.toFixed(3) + ' s (' + (h.each_s * 1e3).toFixed(3) + ' ms a sample)');
		add('threads', h.threads + (h.threads_unsampled ? ' (' + h.threads_unsampled + ' not sampled)' : '') +
			(h.threads_fallback ? ' (' + h.threads_fallback + ' by timer)' : ''));
		add('taken', h.taken + ' = counted ' + h.counted + ' + outside ' + h.outside + ' + dropped ' +
			(h.saturated + h.lost) + ' (saturated ' + h.saturated + ', lost ' + h.lost + ')');
		if (h.lost && h.lost_by) {
			const names = { ring_full: 'ring full', throttled: 'throttled', timer_late: 'timer late',
				thread_tail: 'thread tails', kernel_not_charged: 'kernel time not charged',
				unwritable: 'unwritable counters', corrupt_ring: 'corrupt ring', short_of_stack: 'short of stack',
				not_broken_down: 'not broken down' };
			const parts = [];
			for (const k in h.lost_by) if (h.lost_by[k]) parts.push((names[k] || k) + ' ' + h.lost_by[k]);
			add('lost by cause', parts.join(', '), 'h-lost');
		}
		add('kernel time', h.system + ' samples');
		add('files', h.files);

		const w = $('warnings');
		w.replaceChildren();
		for (const s of P.warn) w.appendChild(el('li', '', s));
		let unknown = 0, nosrc = 0;
		for (let i = 0; i < P.fn.n.length; i++) {
			const name = S[P.fn.n[i]];
			if (name === '[unknown]') unknown += P.fn.c[i];
			let src = false;
			for (let j = P.lineAt[i]; j < P.lineAt[i + 1] && !src; j++)
				src = P.ln.f[j] >= 0 && D.src[P.ln.f[j]] !== undefined;
			if (!src) nosrc += P.fn.c[i];
		}
		if (unknown) w.appendChild(el('li', '', unknown + ' samples (' + pct(unknown, P.total) +
			') are in no known function: their objects have no symbol there'));
		const anon = P.obj.n.findIndex(k => S[k] === '[JIT or anonymous code]');
		if (anon >= 0) w.appendChild(el('li', '', P.obj.c[anon] + ' samples (' + pct(P.obj.c[anon], P.total) +
			') are in JIT or anonymous code, outside every object: no /tmp/perf-PID.map names them'));
		if (nosrc) w.appendChild(el('li', '', pct(nosrc, P.total) + ' of the samples are in ' +
			'functions with no readable source (no DWARF line table, or the file is gone): ' +
			'those show disassembly, or their addresses'));
	}

	function objects() {
		const box = $('objects'), o = P.obj;
		const max = o.c.length ? o.c[0] : 1;
		box.replaceChildren();
		const head = el('div', 'r head');
		for (const t of ['self %', 'samples', 'sys %', '', 'object']) head.appendChild(el('span', t === 'object' || !t ? '' : 'num', t));
		box.appendChild(head);
		for (let i = 0; i < o.n.length; i++) {
			const r = el('div', 'r');
			r.append(el('span', 'num', pct(o.c[i], P.total)), el('span', 'num', String(o.c[i])),
				el('span', 'num', P.head.system_files ? pct(o.s[i], o.c[i]) : '-'), bar(o.c[i] / max),
				el('span', '', S[o.n[i]]));
			r.title = S[o.n[i]];
			box.appendChild(r);
		}
	}

	function bar(t) {
		const b = el('span', 'bar'), i = el('i');
		i.style.width = (100 * t).toFixed(1) + '%';
		i.style.background = shade(0.25 + 0.75 * t);
		b.appendChild(i);
		return b;
	}

	/* Filter and sort the functions into order. */
	function arrange() {
		const n = P.fn.n.length, f = state.filter.toLowerCase();
		let idx = [];
		if (f) {
			if (!P.lower) {
				P.lower = new Array(n);
				for (let i = 0; i < n; i++)
					P.lower[i] = S[P.fn.n[i]].toLowerCase() + '\u0000' + base(S[P.obj.n[P.fn.o[i]]]).toLowerCase();
			}
			for (let i = 0; i < n; i++) if (P.lower[i].includes(f)) idx.push(i);
		} else {
			idx = Array.from({ length: n }, (_, i) => i);
		}
		const c = P.fn.c, s = P.fn.s, t = P.fn.t, dir = state.dir;
		const name = (i) => S[P.fn.n[i]], obj = (i) => base(S[P.obj.n[P.fn.o[i]]]);
		const cmp = {
			count: (a, b) => dir * (c[a] - c[b]) || a - b,
			total: (a, b) => dir * (t[a] - t[b]) || a - b,
			sys: (a, b) => dir * ((c[a] ? s[a] / c[a] : 0) - (c[b] ? s[b] / c[b] : 0)) || a - b,
			name: (a, b) => dir * (name(a) < name(b) ? -1 : name(a) > name(b) ? 1 : 0) || a - b,
			object: (a, b) => dir * (obj(a) < obj(b) ? -1 : obj(a) > obj(b) ? 1 : 0) || a - b,
		}[state.sort];
		if (!(state.sort === 'count' && dir < 0)) idx.sort(cmp);	/* the data is hottest first */
		order = idx;
		$('shown').textContent = order.length + ' of ' + n + ' functions';
		for (const b of document.querySelectorAll('#fnhead button')) {
			b.classList.toggle('sorted', b.dataset.sort === state.sort && b.textContent !== 'self s' && b.textContent !== 'samples');
			b.classList.toggle('up', state.dir > 0);
		}
		fnList.reset(order.length);
	}

	function fnRow(k) {
		const i = order[k], r = el('div', 'r' + (i === state.fn ? ' sel' : ''));
		const c = P.fn.c[i], obj = S[P.obj.n[P.fn.o[i]]];
		r.dataset.fn = i;
		r.append(el('span', 'num', pct(c, P.total)), el('span', 'num', secs(c)),
			el('span', 'num', String(c)));
		if (P.fn.t) r.appendChild(el('span', 'num', pct(P.fn.t[i], P.total)));	/* from the stacks */
		r.append(el('span', 'num', P.head.system_files ? pct(P.fn.s[i], c) : '-'),
			bar(c / (P.fn.c[0] || 1)), el('span', 'name', S[P.fn.n[i]]), el('span', 'obj', base(obj)));
		r.title = S[P.fn.n[i]] + ' in ' + obj;
		return r;
	}

	/* Where the function's samples are: its source lines by file, in
	 * windows around the lines that have samples. */
	function sourceView(i, box) {
		const a = P.lineAt[i], b = P.lineAt[i + 1], own = P.fn.c[i] || 1;
		if (a === b) return false;
		let max = 0;
		for (let j = a; j < b; j++) max = Math.max(max, P.ln.c[j]);
		const hot = new Set();	/* the three hottest, the first of them marked */
		for (let j = a; j < b && hot.size < 3; j++) hot.add(j);
		const files = new Map();
		let nolines = 0, anySource = false;
		for (let j = a; j < b; j++) {
			const f = P.ln.f[j];
			if (f < 0) { nolines += P.ln.c[j]; continue; }
			if (!files.has(f)) files.set(f, []);
			files.get(f).push(j);
		}
		for (const [f, js] of files) {
			const text = D.src[f];
			const total = js.reduce((t, j) => t + P.ln.c[j], 0);
			box.appendChild(el('h3', '', S[f] + ' \u2014 ' + pct(total, own) + ' of the function'));
			const byLine = new Map();
			for (const j of js) byLine.set(P.ln.l[j], j);
			const src = el('div', 'src');
			if (!text) {
				src.appendChild(el('div', 'l gap', D.srccut
					? '    source not embedded (unreadable, or past the page\'s limit); its lines with samples:'
					: '    source not readable; its lines with samples:'));
				for (const j of js.slice().sort((x, y) => P.ln.l[x] - P.ln.l[y])) src.appendChild(srcLine(j, P.ln.l[j], '', max, own, hot, a, S[f]));
				box.appendChild(src);
				continue;
			}
			anySource = true;
			const lineText = (n) => {
				for (const [first, lines] of text)
					if (n >= first && n < first + lines.length) return lines[n - first];
				return null;
			};
			const nums = Array.from(byLine.keys()).sort((x, y) => x - y);
			let chunkEnd = -1;
			for (const n of nums) {
				const lo = Math.max(1, n - 3), hi = n + 3;
				/* a gap of one or two lines is shown, not elided */
				if (lo > chunkEnd + 3 && chunkEnd >= 0) src.appendChild(el('div', 'l gap', '     \u22ef'));
				const from = chunkEnd >= 0 && lo <= chunkEnd + 3 ? chunkEnd + 1 : lo;
				for (let k = from; k <= hi; k++) {
					const t = lineText(k);
					if (t === null && !byLine.has(k)) continue;
					src.appendChild(srcLine(byLine.has(k) ? byLine.get(k) : -1, k, t || '', max, own, hot, a, S[f]));
				}
				chunkEnd = Math.max(chunkEnd, hi);
			}
			box.appendChild(src);
		}
		if (nolines) box.appendChild(el('p', 'hint', nolines + ' samples (' + pct(nolines, own) +
			') at addresses with no line information'));
		return anySource;
	}

	function srcLine(j, n, text, max, own, hot, first, file) {
		const c = j >= 0 ? P.ln.c[j] : 0, t = max ? c / max : 0;
		const r = el('div', 'l' + (c ? ' hit' : '') + (hot.has(j) ? ' hot' : '') + (j === first ? ' hottest' : ''));
		r.dataset.line = n;
		r.dataset.file = file;
		r.dataset.count = c;
		if (c) { r.style.background = shade(t); r.style.color = ink(t); }
		const code = el('span', 't', text);
		if (j >= 0 && P.inlOf.has(j)) code.appendChild(el('span', 'badge', 'inlined: ' + S[P.inlOf.get(j)]));
		if (j === first) code.appendChild(el('span', 'badge', 'hottest'));
		r.append(el('span', 'num', String(n)), el('span', 'num', c ? String(c) : ''),
			el('span', 'num', c ? pct(c, own) : ''), code);
		return r;
	}

	function disasmView(i, box) {
		const d = P.disOf.get(i);
		if (!d) return false;
		const [, lines, counts] = d, own = P.fn.c[i] || 1;
		const max = counts.reduce((m, c) => Math.max(m, c), 1);
		box.appendChild(el('h3', '', 'disassembly'));
		const src = el('div', 'src dis');
		let best = -1;
		counts.forEach((c, k) => { if (c && (best < 0 || c > counts[best])) best = k; });
		lines.forEach((text, k) => {
			const c = counts[k], t = c / max;
			const r = el('div', 'l' + (c ? ' hit' : '') + (k === best ? ' hottest hot' : ''));
			if (c) { r.style.background = shade(t); r.style.color = ink(t); }
			r.append(el('span', 'num', ''), el('span', 'num', c ? String(c) : ''),
				el('span', 'num', c ? pct(c, own) : ''), el('span', 't', text));
			src.appendChild(r);
		});
		box.appendChild(src);
		return true;
	}

	function addressView(i, box) {
		const a = P.addrAt[i], n = P.addrAt[i + 1] - a;
		if (!n) return;
		const det = el('details');
		det.appendChild(el('summary', '', n + ' address' + (n === 1 ? '' : 'es') + ' with samples'));
		const list = el('div', 'vlist addr');
		list.append(el('div', 'vspace'), el('div', 'vrows'));
		det.appendChild(list);
		box.appendChild(det);
		const addr = new Float64Array(n);
		let at = P.fn.a[i], max = 0;
		for (let k = 0; k < n; k++) { at += P.ad.d[a + k]; addr[k] = at; max = Math.max(max, P.ad.c[a + k]); }
		const own = P.fn.c[i] || 1;
		const v = VList(list, n, (k) => {
			const c = P.ad.c[a + k], r = el('div', 'r');
			r.append(el('span', 'num', '0x' + addr[k].toString(16)), el('span', 'num', String(c)),
				el('span', 'num', pct(c, own)), bar(c / max));
			return r;
		});
		det.addEventListener('toggle', () => v.reset(n));
	}

	/* gmon.out's call graph: callers above the function, callees below,
	 * as gprof -q: count/calls, and the self and children seconds the
	 * calls carry.  A caller or callee is a link to its own entry. */
	function graphView(i, box) {
		const g = P.cg;
		if (!g) return;
		const callers = g.callers[i] || [], callees = g.callees[i] || [];
		if (!callers.length && !callees.length && !g.calls[i]) return;
		box.appendChild(el('h3', '', 'callers and callees'));
		const t = el('div', 'graph');
		const head = el('div', 'r head');
		for (const h of ['calls', 'self s', 'children s', 'function', 'object']) head.appendChild(el('span', h.endsWith('s') && h !== 'calls' || h === 'calls' ? 'num' : '', h));
		t.appendChild(head);
		const name = (fi) => fi >= 0 ? S[P.fn.n[fi]] : fi === -1 ? '<spontaneous>' : S[-2 - fi];
		const line = (cls, fi, calls, self, children, indent) => {
			const r = el('div', 'r ' + cls);
			const label = el('span', 'name');
			label.textContent = indent + name(fi);
			r.append(el('span', 'num', calls), el('span', 'num', self), el('span', 'num', children), label,
				el('span', 'obj', fi >= 0 ? base(S[P.obj.n[P.fn.o[fi]]]) : ''));
			if (fi >= 0 && cls !== 'self') {
				r.dataset.fn = fi;
				r.tabIndex = 0;
				r.addEventListener('click', () => select(fi, true));
				r.addEventListener('keydown', (e) => { if (e.key === 'Enter') select(fi, true); });
			}
			return r;
		};
		const total = g.calls[i];
		const side = (list, cls) => {
			for (let k = 0; k + 3 < list.length; k += 4) {
				const fi = list[k];
				t.appendChild(line(cls, fi, list[k + 1] + (total && cls === 'caller' ? '/' + total : ''),
					list[k + 2].toFixed(3), list[k + 3].toFixed(3), cls === 'caller' ? '    ' : '        '));
			}
		};
		side(callers, 'caller');
		const own = line('self', i, total + (g.self[i] ? '+' + g.self[i] : ''), secs(P.fn.c[i]), '', '');
		t.appendChild(own);
		side(callees, 'callee');
		box.appendChild(t);
	}

	function select(i, scroll) {
		state.fn = i;
		const box = $('detail');
		box.replaceChildren();
		if (flame.heading(i, box)) {	/* a caller with no row of its own */
			flame.detail(i, box);
			fnList.paint(true);
			return;
		}
		const obj = S[P.obj.n[P.fn.o[i]]];
		const h = el('div', 'fnhead', S[P.fn.n[i]]);
		h.id = 'fn-name';
		box.append(h, el('div', 'hint', P.fn.c[i] + ' samples, ' + pct(P.fn.c[i], P.total) +
			' of all, ' + secs(P.fn.c[i]) + ' s' + (P.fn.t ? ', total ' + pct(P.fn.t[i], P.total) + ' with its callees' : '') +
			'; in ' + obj));
		graphView(i, box);
		flame.detail(i, box);
		if (!P.fn.c[i]) {	/* only calls others: nothing of its own to show */
			fnList.paint(true);
			return;
		}
		const shown = sourceView(i, box);
		if (!disasmView(i, box) && !shown)
			box.appendChild(el('p', 'hint', 'No source or disassembly embedded for this function ' +
				'(profil report --annotate shows its disassembly); its addresses:'));
		addressView(i, box);
		fnList.paint(true);
		if (scroll) {
			const k = order.indexOf(i);
			if (k >= 0) fnList.scrollTo(k);
		}
	}

	function showProcess(k) {
		state.proc = k;
		state.fn = -1;
		P = prepare(D.procs[k]);
		for (const e of [$('fnhead'), $('fnlist')]) e.classList.toggle('tot', !!P.fn.t);
		$('fntotal').hidden = !P.fn.t;
		if (!P.fn.t && state.sort === 'total') state.sort = 'count';
		$('title').textContent = 'profil: ' + base(P.head.program);
		summary();
		objects();
		arrange();
		flame.show(P, k);
		$('detail').replaceChildren(el('p', 'hint', 'Click a function to see where its time goes.'));
	}

	function start() {
		const sel = $('proc');
		D.procs.forEach((p, k) => { const o = el('option', '', p.label); o.value = k; sel.appendChild(o); });
		if (D.procs.length < 2) { sel.hidden = true; $('proclabel').hidden = true; }
		sel.addEventListener('change', () => showProcess(+sel.value));
		fnList = VList($('fnlist'), 0, fnRow);
		flame = profilFlame({ S, el, pct, base, select });
		$('fnlist').addEventListener('click', (e) => {
			const r = e.target.closest('.r');
			if (r && r.dataset.fn !== undefined) select(+r.dataset.fn, false);
		});
		/* The keyboard: arrows, Home and End move the selection. */
		$('fnlist').addEventListener('keydown', (e) => {
			if (!order.length) return;
			let k = order.indexOf(state.fn);
			if (e.key === 'ArrowDown') k = Math.min(order.length - 1, k + 1);
			else if (e.key === 'ArrowUp') k = Math.max(0, k - 1);
			else if (e.key === 'Home') k = 0;
			else if (e.key === 'End') k = order.length - 1;
			else return;
			e.preventDefault();
			select(order[k], true);
		});
		let pending = 0;
		$('filter').addEventListener('input', () => {
			cancelAnimationFrame(pending);
			pending = requestAnimationFrame(() => { state.filter = $('filter').value.trim(); arrange(); });
		});
		for (const b of document.querySelectorAll('#fnhead button'))
			b.addEventListener('click', () => {
				const k = b.dataset.sort;
				if (state.sort === k) state.dir = -state.dir;
				else { state.sort = k; state.dir = k === 'name' || k === 'object' ? 1 : -1; }
				arrange();
			});
		const legend = $('legend');
		for (let k = 0; k <= 8; k++) { const i = el('i'); i.style.background = shade(k / 8); i.title = (k * 12.5) + '%'; legend.appendChild(i); }
		showProcess(0);
		window.profilRendered = performance.now();
	}
	start();
})();
