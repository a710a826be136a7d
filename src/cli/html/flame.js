/* flame.js - the flame graph of profil report --html, and the callers
 * and callees a function's detail pane shows, both from the process's
 * call tree (html_stacks.c: every distinct stack merged into a tree of
 * function ids with the samples each node ends in).
 *
 * The tree comes in preorder, children hottest first, so a node's
 * subtree is the run of nodes after it that are deeper; every pass below
 * is one walk of that order with a path stack, no recursion (stacks are
 * up to 1024 deep).  Its block of the page is read after the first
 * render: a million nodes must not hold up the table.
 *
 * The graph is an icicle (the outermost frame at the top, as in
 * speedscope and Chrome), drawn as positioned elements, and only the
 * frames at least a pixel wide: what is drawn is bounded by the width
 * times the depth, not by the number of stacks. */
'use strict';
function profilFlame(api) {
	const { S, el, pct, base } = api;
	const $ = (id) => document.getElementById(id);
	const H = 18;		/* px a level */
	const MINPX = 1;	/* frames narrower are not drawn, nor their callees */
	const MAXDRAW = 30000;	/* elements at most, whatever the tree */
	let P = null, T = null, K = 0;
	let zoom = 0, query = '';
	let stacks = null;	/* the stacks block, once parsed */

	/* A column of html_stacks.c: numbers in base 32, a letter each five
	 * bits, lowest first; a letter of the upper half says more follow. */
	const DIGIT = new Int8Array(128).fill(-1);
	'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'.split('').forEach((c, k) => { DIGIT[c.charCodeAt(0)] = k; });
	function column(s, n, Type) {
		const out = new Type(n);
		let k = 0, v = 0, mul = 1;
		for (let i = 0; i < s.length && k < n; i++) {
			const x = DIGIT[s.charCodeAt(i)];
			if (x >= 32) { v += (x - 32) * mul; mul *= 32; } else { out[k++] = v + x * mul; v = 0; mul = 1; }
		}
		return out;
	}

	function esc(s) {
		return s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);
	}

	/* The tree of process p, made when first shown.  Node 0 stands for
	 * every stack; a function id is a row of the function table, or
	 * after them one of the functions only the stacks have (fg.x). */
	function tree(p) {
		if (p.fgTree) return p.fgTree;
		const g = p.fg, nfn = p.fn.n.length, N = g.k + 1;
		const nf = nfn + g.x.n.length;
		const up = column(g.u, g.k, Int32Array), fn = new Int32Array(N);
		fn.set(column(g.f, g.k, Int32Array), 1);
		const self = new Float64Array(N);
		self.set(column(g.c, g.k, Float64Array), 1);
		const parent = new Int32Array(N), depth = new Int32Array(N);
		const total = self.slice(), end = new Int32Array(N);
		fn[0] = -1;
		const path = new Int32Array(N + 1);
		let maxDepth = 0;
		for (let i = 1; i < N; i++) {
			const d = depth[i - 1] + 1 - up[i - 1];
			parent[i] = path[d - 1];
			path[d] = i;
			depth[i] = d;
			if (d > maxDepth) maxDepth = d;
		}
		for (let i = N - 1; i > 0; i--) total[parent[i]] += total[i];
		for (let i = 0; i < N; i++) end[i] = i + 1;
		for (let i = N - 1; i > 0; i--) if (end[i] > end[parent[i]]) end[parent[i]] = end[i];
		/* Children in preorder, so hottest first: a frame's callees
		 * left to right. */
		const kidAt = new Int32Array(N + 1);
		for (let i = 1; i < N; i++) kidAt[parent[i] + 1]++;
		for (let i = 0; i < N; i++) kidAt[i + 1] += kidAt[i];
		const kids = new Int32Array(Math.max(1, N - 1)), fill = kidAt.slice(0, N);
		for (let i = 1; i < N; i++) kids[fill[parent[i]]++] = i;
		/* Each function's total: the samples with it anywhere in their
		 * stack, once however often it recurs. */
		const incl = new Float64Array(nf), selfOf = new Float64Array(nf);
		const onPath = new Int32Array(nf);
		let top = 0;
		for (let i = 1; i < N; i++) {
			while (top >= depth[i]) onPath[fn[path[top--]]]--;
			if (!onPath[fn[i]]) incl[fn[i]] += total[i];
			onPath[fn[i]]++;
			path[++top] = i;
			selfOf[fn[i]] += self[i];
		}
		/* Each function's nodes, in preorder. */
		const nodeAt = new Int32Array(nf + 1);
		for (let i = 1; i < N; i++) nodeAt[fn[i] + 1]++;
		for (let f = 0; f < nf; f++) nodeAt[f + 1] += nodeAt[f];
		const nodes = new Int32Array(Math.max(1, N - 1)), put = nodeAt.slice(0, nf);
		for (let i = 1; i < N; i++) nodes[put[fn[i]]++] = i;
		p.fgTree = T = { N, nf, nfn, parent, fn, depth, self, total, end, kidAt, kids, incl, selfOf, maxDepth,
			nodeAt, nodes };
		return T;
	}

	function name(f) {
		return f < T.nfn ? S[P.fn.n[f]] : S[P.fg.x.n[f - T.nfn]];
	}
	function object(f) {
		const o = f < T.nfn ? P.fn.o[f] : P.fg.x.o[f - T.nfn];
		return o >= 0 ? S[P.obj.n[o]] : o <= -2 ? S[-2 - o] : '';
	}

	/* Warm colours from the name, as flame graphs have them; a match
	 * is purple and outlined, which no warm colour is. */
	function colour(f) {
		const s = name(f);
		let h = 0;
		for (let k = 0; k < s.length && k < 40; k++) h = (h * 31 + s.charCodeAt(k)) >>> 0;
		return 'hsl(' + (10 + h % 40) + ',' + (70 + (h >> 8) % 25) + '%,' + (62 + (h >> 16) % 14) + '%)';
	}

	let lowered = null;
	function matcher() {
		if (!query) return null;
		if (!lowered || lowered.length !== T.nf) {
			lowered = new Array(T.nf);
			for (let f = 0; f < T.nf; f++) lowered[f] = name(f).toLowerCase();
		}
		const q = query.toLowerCase(), hit = new Uint8Array(T.nf);
		for (let f = 0; f < T.nf; f++) hit[f] = lowered[f].includes(q) ? 1 : 0;
		return hit;
	}

	/* Samples under node z (0: all) with a matching frame: the totals
	 * of the outermost matching nodes. */
	function matched(hit, z) {
		let sum = 0, inside = Infinity;
		for (let i = z ? z : 1; i < T.end[z]; i++) {
			if (T.depth[i] <= inside) inside = Infinity;
			if (inside === Infinity && hit[T.fn[i]]) { sum += T.total[i]; inside = T.depth[i]; }
		}
		return sum;
	}

	function draw() {
		const box = $('flame');
		if (!T || !P.fg.n) return;
		const W = box.clientWidth || 800, hit = matcher();
		const out = [];
		let drawn = 0, deepest = 0;
		const frame = (i, x, w, cls) => {
			const f = i ? T.fn[i] : -1, nm = i ? name(f) : 'all';
			const tip = nm + (i && object(f) ? ' (' + base(object(f)) + ')' : '') + ': ' + T.total[i] +
				' samples, ' + pct(T.total[i], T.total[0]);
			const m = i && hit && hit[f];
			out.push('<div class="fr' + (cls ? ' ' + cls : '') + (m ? ' match' : '') + '" data-node="' + i +
				'" data-fn="' + f + '" data-name="' + esc(nm) + '" style="left:' + x.toFixed(1) + 'px;top:' + T.depth[i] * H +
				'px;width:' + Math.max(w - 1, 1).toFixed(1) + 'px' + (i && !m ? ';background:' + colour(f) : '') +
				'" title="' + esc(tip) + '">' + (w > 24 ? esc(nm) : '') + '</div>');
			drawn++;
			if (T.depth[i] > deepest) deepest = T.depth[i];
		};
		/* Above the zoomed frame: its callers, full width, dimmed. */
		for (let a = T.parent[zoom], chain = []; ; a = T.parent[a]) {
			if (!zoom) break;
			chain.push(a);
			if (!a) { for (const c of chain.reverse()) frame(c, 0, W, 'anc'); break; }
		}
		frame(zoom, 0, W, zoom ? 'zoomed' : '');
		const scale = W / (T.total[zoom] || 1);
		const todo = [zoom, 0];
		while (todo.length && drawn < MAXDRAW) {
			const x0 = todo.pop(), i = todo.pop();
			let x = x0;
			for (let k = T.kidAt[i]; k < T.kidAt[i + 1]; k++) {
				const c = T.kids[k], w = T.total[c] * scale;
				if (w < MINPX) break;	/* hottest first: the rest are narrower */
				frame(c, x, w, '');
				todo.push(c, x);
				x += w;
			}
		}
		box.innerHTML = out.join('');
		box.style.height = (deepest + 1) * H + 'px';
		$('fgreset').disabled = !zoom;
		let says = '';
		if (hit) {
			const all = matched(hit, 0);
			says = 'matched ' + pct(all, T.total[0]) + ' of the samples with stacks (' + all + ')';
			if (zoom) says += ', ' + pct(matched(hit, zoom), T.total[zoom]) + ' of ' + name(T.fn[zoom]) + '\u2019s';
		} else if (zoom) {
			says = name(T.fn[zoom]) + ': ' + pct(T.total[zoom], T.total[0]) + ' of the samples with stacks';
		}
		$('fgmatch').textContent = says;
	}

	let pending = 0;
	function redraw() {
		cancelAnimationFrame(pending);
		pending = requestAnimationFrame(draw);
	}

	/* Process k's stacks and tree, read and made if need be. */
	function ensure() {
		if (!stacks) stacks = JSON.parse($('profil-stacks').textContent);
		P.fg = stacks[K];
		const has = P.fg && P.fg.k > 0 && P.fg.n > 0;
		T = has ? tree(P) : null;
		return has;
	}

	/* Process p (the k-th) shown: its graph, or the one line that says
	 * why none; after the first render, the first time. */
	let later = 0;
	function show(p, k) {
		P = p;
		K = k;
		zoom = 0;
		lowered = null;
		T = null;
		clearTimeout(later);
		if (!stacks) {
			$('fgwhy').textContent = 'drawing the flame graph\u2026';
			$('fgwhy').hidden = false;
			later = setTimeout(() => { draw0(); window.profilFlameDrawn = performance.now(); }, 0);
		} else {
			draw0();
		}
	}
	function draw0() {
		const p = P, has = ensure();
		$('fgtools').hidden = !has;
		$('flame').hidden = !has;
		let why = '';
		if (!has) why = 'No flame graph: ' + (p.fg && p.fg.why ? p.fg.why : 'this profile has no call stacks') + '.';
		else if (p.fg.n < p.head.samples)
			why = (p.head.samples - p.fg.n) + ' of the ' + p.head.samples + ' samples (' +
				pct(p.head.samples - p.fg.n, p.head.samples) + ') have no stack and are not in the graph.';
		$('fgwhy').textContent = why;
		$('fgwhy').hidden = !why;
		if (has) draw();
		else $('flame').replaceChildren();
	}

	/* Callers and callees of function f, each with the share of f's
	 * samples in which it calls f (or f calls it): counted once a
	 * sample, so recursion does not count a sample twice. */
	function edges(f) {
		const callers = new Map(), callees = new Map(), inC = new Map(), inE = new Map();
		const bump = (m, k, d) => { const v = (m.get(k) || 0) + d; m.set(k, v); return v; };
		const sorted = (m) => Array.from(m).sort((a, b) => b[1] - a[1] || a[0] - b[0]);
		/* Not recursive (no node of f under another): its nodes and
		 * their children are all there is to look at. */
		let sum = 0;
		for (let k = T.nodeAt[f]; k < T.nodeAt[f + 1]; k++) sum += T.total[T.nodes[k]];
		if (sum === T.incl[f]) {
			for (let k = T.nodeAt[f]; k < T.nodeAt[f + 1]; k++) {
				const i = T.nodes[k], p = T.parent[i];
				bump(callers, p ? T.fn[p] : -1, T.total[i]);
				for (let j = T.kidAt[i]; j < T.kidAt[i + 1]; j++) bump(callees, T.fn[T.kids[j]], T.total[T.kids[j]]);
			}
			return { callers: sorted(callers), callees: sorted(callees) };
		}
		/* Recursive: walk the subtrees of its outermost nodes, with the
		 * edges of the path to each node, so that an edge the path has
		 * already is not counted again. */
		if (!T.mark) T.mark = new Uint8Array(T.N);
		const mark = T.mark, stack = [];
		const pop = () => {
			const j = stack.pop();
			if (mark[j] & 1) bump(inC, T.parent[j] ? T.fn[T.parent[j]] : -1, -1);
			if (mark[j] & 2) bump(inE, T.fn[j], -1);
			mark[j] = 0;
		};
		for (let k = T.nodeAt[f]; k < T.nodeAt[f + 1];) {
			const r = T.nodes[k], stop = T.end[r];
			for (let i = r; i < stop; i++) {
				while (stack.length && T.depth[stack[stack.length - 1]] >= T.depth[i]) pop();
				const p = T.parent[i];
				if (T.fn[i] === f) {
					const g = p ? T.fn[p] : -1;
					if (bump(inC, g, 1) === 1) bump(callers, g, T.total[i]);
					mark[i] |= 1;
				}
				if (i !== r && T.fn[p] === f) {
					if (bump(inE, T.fn[i], 1) === 1) bump(callees, T.fn[i], T.total[i]);
					mark[i] |= 2;
				}
				stack.push(i);
			}
			while (stack.length) pop();
			while (k < T.nodeAt[f + 1] && T.nodes[k] < stop) k++;
		}
		return { callers: sorted(callers), callees: sorted(callees) };
	}

	/* The detail pane's part: f's total, callers above, callees below. */
	function detail(f, box) {
		if (!T && !(P && ensure())) return;
		if (f < 0 || f >= T.nf || !T.incl[f]) return;
		const own = T.incl[f], e = edges(f);
		box.appendChild(el('h3', '', 'callers and callees, from the stacks'));
		box.appendChild(el('div', 'hint', 'in ' + own + ' samples\u2019 stacks, ' + pct(own, T.total[0]) +
			' of those with stacks; the last frame in ' + T.selfOf[f] + '. Shares are of its ' + own + '.'));
		const t = el('div', 'graph fgedges');
		const head = el('div', 'r head');
		for (const h of ['share', 'samples', '', 'function', 'object']) head.appendChild(el('span', h === 'share' || h === 'samples' ? 'num' : '', h));
		t.appendChild(head);
		const line = (cls, g, n) => {
			const r = el('div', 'r ' + cls);
			const label = el('span', 'name', (g >= 0 ? name(g) : cls === 'fgcaller' ? '[outermost: no caller]' : '[itself: the last frame]'));
			r.append(el('span', 'num', pct(n, own)), el('span', 'num', String(n)), el('span', ''), label,
				el('span', 'obj', g >= 0 ? base(object(g)) : ''));
			r.title = label.textContent.trim();
			if (g >= 0 && cls !== 'self') {
				r.dataset.fn = g;
				r.tabIndex = 0;
				r.addEventListener('click', () => api.select(g, true));
				r.addEventListener('keydown', (ev) => { if (ev.key === 'Enter') api.select(g, true); });
			}
			return r;
		};
		for (const [g, n] of e.callers) t.appendChild(line('fgcaller', g, n));
		t.appendChild(line('self', f, own));
		for (const [g, n] of e.callees) t.appendChild(line('fgcallee', g, n));
		if (T.selfOf[f]) t.appendChild(line('fgcallee', -1, T.selfOf[f]));
		box.appendChild(t);
		const a = el('button', 'fgzoom', 'show in the flame graph');
		a.type = 'button';
		a.addEventListener('click', () => {	/* its widest node */
			let best = 0, w = 0;
			for (let k = T.nodeAt[f]; k < T.nodeAt[f + 1]; k++)
				if (T.total[T.nodes[k]] > w) { best = T.nodes[k]; w = T.total[best]; }
			zoom = best;
			draw();
			$('flame').scrollIntoView({ block: 'nearest' });
		});
		box.appendChild(a);
	}

	/* The header of a frame only the stacks have, with no row in the
	 * table: code only ever inlined, "[truncated]". */
	function heading(f, box) {
		if (!T && !(P && ensure())) return false;
		if (f < T.nfn || f >= T.nf) return false;
		const h = el('div', 'fnhead', name(f));
		h.id = 'fn-name';
		box.append(h, el('div', 'hint', 'a frame of the stacks only' + (object(f) ? ', in ' + base(object(f)) : '') +
			': inlined code, or the mark of stacks whose walk did not reach the outermost frame.'));
		return true;
	}

	$('flame').addEventListener('click', (ev) => {
		const r = ev.target.closest('.fr');
		if (!r) return;
		const i = +r.dataset.node;
		zoom = i;
		draw();
		if (i) api.select(T.fn[i], true);
	});
	$('fgreset').addEventListener('click', () => { zoom = 0; draw(); });
	$('fgsearch').addEventListener('input', () => { query = $('fgsearch').value.trim(); redraw(); });
	window.addEventListener('resize', () => { if (T) redraw(); });
	return { show, detail, heading };
}
