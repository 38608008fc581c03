// The rollout dashboard: plain JavaScript drawing HTML tables and SVG charts
// from the JSON endpoints under /api/. Pages are chosen by the URL's hash,
// and each page keeps its state (the chosen point, metric, axis, view,
// grouping, filters, smoothing…) in the hash's query, so a reload or a
// shared link shows the same view:
//   #/                          experiments
//   #/exp/NAME?at=&metrics=&metric=&x=&view=&group=&filter=&smooth=&hide=&vs=&diff=
//                               one experiment: comparison table, curves, config diff, runs
//   #/run/ID?x=&step=           one run: config, notes, metric curves, evaluations, samples
//   #/tree/ID?step=S&group=G&vs=H   rollout trees of a step, H compared beside G
'use strict';

const POLL_MS = 2000;
// Colours of variants, by the variant's place in the experiment's order:
// report.Palette, read from /api/style before the first page is drawn
// (experiment answers also carry each variant's colour).
let PALETTE = ['#0072b2'];

// ---------- small helpers ----------

// el makes an HTML element: attributes (on* are listeners) and children
// (strings become text).
function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  setAttrs(e, attrs);
  append(e, kids);
  return e;
}

// sv makes an SVG element.
function sv(tag, attrs, ...kids) {
  const e = document.createElementNS('http://www.w3.org/2000/svg', tag);
  setAttrs(e, attrs);
  append(e, kids);
  return e;
}

function setAttrs(e, attrs) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (k === 'dataset') Object.assign(e.dataset, v);
    else e.setAttribute(k, v === true ? '' : v);
  }
}

function append(e, kids) {
  for (const k of kids.flat(Infinity)) {
    if (k === undefined || k === null || k === false) continue;
    e.append(k instanceof Node ? k : String(k));
  }
}

async function api(path) {
  const r = await fetch(path, {cache: 'no-store'});
  let body;
  try { body = await r.json(); } catch (e) { throw new Error(`${path}: ${r.status} ${r.statusText}`); }
  if (!r.ok) throw new Error(body && body.error ? body.error : `${path}: ${r.status}`);
  return body;
}

const enc = encodeURIComponent;

// num formats a number for reading: 4 significant digits, k/M/G for big counts.
function num(x, digits = 4) {
  if (x === null || x === undefined || Number.isNaN(x)) return '—';
  if (!Number.isFinite(x)) return x > 0 ? '∞' : '−∞';
  const a = Math.abs(x);
  if (a >= 1e4) {
    for (const [d, s] of [[1e12, 'T'], [1e9, 'G'], [1e6, 'M'], [1e3, 'k']]) {
      if (a >= d) return String(Number((x / d).toPrecision(3))) + s;
    }
  }
  if (Number.isInteger(x)) return String(x);
  return String(Number(x.toPrecision(digits)));
}

function duration(ns) {
  let s = Math.round(ns / 1e9);
  const h = Math.floor(s / 3600); s -= h * 3600;
  const m = Math.floor(s / 60); s -= m * 60;
  return h ? `${h}h${String(m).padStart(2, '0')}m` : m ? `${m}m${String(s).padStart(2, '0')}s` : `${s}s`;
}

function when(t) {
  if (!t) return '—';
  const d = new Date(t);
  if (Number.isNaN(d.getTime()) || d.getFullYear() < 1971) return '—';
  const ago = (Date.now() - d.getTime()) / 1000;
  const rel = ago < 90 ? `${Math.max(0, Math.round(ago))} s ago` : ago < 5400 ? `${Math.round(ago / 60)} min ago` : ago < 172800 ? `${Math.round(ago / 3600)} h ago` : `${Math.round(ago / 86400)} days ago`;
  return el('span', {title: d.toLocaleString()}, rel);
}

function statusBadge(status, count) {
  const cls = ['running', 'finished', 'failed'].includes(status) ? 'st-' + status : 'st-other';
  return el('span', {class: 'badge ' + cls, dataset: {status}}, count === undefined ? status : `${count} ${status}`);
}

function progressBar(done, total) {
  if (!total) return el('span', {}, `${done} steps`);
  const pct = Math.min(100, 100 * done / total);
  return el('span', {}, el('span', {class: 'bar'}, el('span', {style: `width:${pct}%`})), `${done}/${total}`);
}

function runProgress(r) {
  return progressBar(Math.max(0, r.last_step), r.total_steps || 0);
}

function shortID(id) { return id.length > 12 ? id.slice(0, 12) : id; }

function variantColour(order, name) {
  const i = order.indexOf(name);
  return PALETTE[(i < 0 ? order.length : i) % PALETTE.length];
}

function errorBox(err) { return el('div', {class: 'error', role: 'alert'}, String(err.message || err)); }

// setQuery replaces the hash's query with the state's non-default values
// without a new history entry or a re-render (history.replaceState fires
// no hashchange).
function setQuery(path, values) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(values)) {
    if (v === undefined || v === null || v === '' || (Array.isArray(v) && !v.length)) continue;
    if (Array.isArray(v)) v.forEach(x => q.append(k, x)); else q.set(k, v);
  }
  const hash = '#' + path + (String(q) ? '?' + q : '');
  if (location.hash !== hash) history.replaceState(null, '', hash);
}

// smooth is the exponential moving average of ys with weight w (0: the
// series itself), skipping nulls and debiased at the start, as W&B's.
function smooth(ys, w) {
  if (!(w > 0)) return ys;
  let acc = 0, norm = 0;
  return ys.map(y => {
    if (y === null) return null;
    acc = w * acc + (1 - w) * y; norm = w * norm + (1 - w);
    return acc / norm;
  });
}

// ---------- charts ----------

// ticks returns about n round values covering [lo, hi].
function ticks(lo, hi, n) {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / n;
  const p = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 5, 10].map(m => m * p).find(s => s >= raw);
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(Math.abs(v) < step * 1e-9 ? 0 : v);
  return out;
}

// chart draws series (each {name, colour, x, y, lo, hi, marks, n, seeds,
// raw, dash, grey}) as lines with shaded bands on shared axes; null values
// break a line. A point over fewer seeds than its curve has (n < seeds) is
// drawn hollow; raw is the unsmoothed line, drawn faint behind y. opt:
// width, height, title, xlabel, ylabel, integerX, zero (a line at 0),
// range [lo, hi] the y axis stays within.
function chart(series, opt) {
  const W = opt.width || 560, H = opt.height || 300;
  const m = {l: opt.ylabel ? 66 : 52, r: 12, t: opt.title ? 22 : 10, b: opt.xlabel ? 40 : 30};
  const svg = sv('svg', {class: 'chart', width: W, height: H, viewBox: `0 0 ${W} ${H}`, dataset: {metric: opt.metric || opt.title || ''}});
  if (opt.title) svg.append(sv('text', {x: m.l, y: 15, class: 'title'}, opt.title));
  let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
  for (const s of series) {
    s.x.forEach((x, i) => {
      if (x === null || s.y[i] === null) return;
      x0 = Math.min(x0, x); x1 = Math.max(x1, x);
      for (const v of [s.y[i], s.lo ? s.lo[i] : null, s.hi ? s.hi[i] : null, s.raw ? s.raw[i] : null]) {
        if (v !== null && v !== undefined) { y0 = Math.min(y0, v); y1 = Math.max(y1, v); }
      }
    });
  }
  if (!Number.isFinite(x0)) {
    svg.append(sv('text', {x: W / 2, y: H / 2, 'text-anchor': 'middle'}, 'no data'));
    return svg;
  }
  if (opt.zero) { y0 = Math.min(y0, 0); y1 = Math.max(y1, 0); }
  if (x1 === x0) { x0 -= 1; x1 += 1; }
  if (y1 === y0) { const d = Math.abs(y0) * 0.1 || 1; y0 -= d; y1 += d; }
  const pad = (y1 - y0) * 0.05; y0 -= pad; y1 += pad;
  if (opt.range) {
    if (opt.range[0] !== null && y0 < opt.range[0]) y0 = Math.min(opt.range[0], y1 - pad);
    if (opt.range[1] !== null && y1 > opt.range[1]) y1 = Math.max(opt.range[1], y0 + pad);
  }
  const X = x => m.l + (x - x0) / (x1 - x0) * (W - m.l - m.r);
  const Y = y => H - m.b - (y - y0) / (y1 - y0) * (H - m.t - m.b);
  for (const t of ticks(y0, y1, 5)) {
    svg.append(sv('line', {x1: m.l, x2: W - m.r, y1: Y(t), y2: Y(t), class: 'grid'}));
    svg.append(sv('text', {x: m.l - 5, y: Y(t) + 4, 'text-anchor': 'end'}, num(t, 3)));
  }
  let xt = ticks(x0, x1, Math.max(3, Math.floor(W / 110)));
  if (opt.integerX) xt = xt.filter(Number.isInteger);
  for (const t of xt) {
    svg.append(sv('line', {x1: X(t), x2: X(t), y1: m.t, y2: H - m.b, class: 'grid'}));
    svg.append(sv('text', {x: X(t), y: H - m.b + 14, 'text-anchor': 'middle'}, num(t, 3)));
  }
  svg.append(sv('line', {x1: m.l, x2: m.l, y1: m.t, y2: H - m.b, class: 'axis'}));
  svg.append(sv('line', {x1: m.l, x2: W - m.r, y1: H - m.b, y2: H - m.b, class: 'axis'}));
  if (opt.zero) svg.append(sv('line', {x1: m.l, x2: W - m.r, y1: Y(0), y2: Y(0), class: 'zero'}));
  if (opt.xlabel) svg.append(sv('text', {x: (m.l + W - m.r) / 2, y: H - 6, 'text-anchor': 'middle', class: 'xlabel'}, opt.xlabel));
  if (opt.ylabel) svg.append(sv('text', {x: 0, y: 0, transform: `translate(13 ${(m.t + H - m.b) / 2}) rotate(-90)`, 'text-anchor': 'middle', class: 'ylabel'}, opt.ylabel));
  for (const s of series) {
    const g = sv('g', {class: 'series' + (s.grey ? ' grey' : ''), dataset: {variant: s.name}});
    const colour = s.grey ? '#c8c8c8' : s.colour;
    if (s.lo && s.hi && !s.grey) {
      for (const seg of segments(s.x, i => s.lo[i] !== null && s.hi[i] !== null && s.x[i] !== null)) {
        if (seg.length < 2) continue;
        const up = seg.map(i => `${X(s.x[i])},${Y(s.hi[i])}`);
        const down = seg.slice().reverse().map(i => `${X(s.x[i])},${Y(s.lo[i])}`);
        g.append(sv('polygon', {class: 'band', points: up.concat(down).join(' '), fill: colour, 'fill-opacity': 0.15, stroke: 'none'}));
      }
    }
    if (s.raw) {
      for (const seg of segments(s.x, i => s.raw[i] !== null && s.x[i] !== null)) {
        g.append(sv('polyline', {class: 'raw', points: seg.map(i => `${X(s.x[i])},${Y(s.raw[i])}`).join(' '), fill: 'none', stroke: colour, 'stroke-width': 1.2, 'stroke-opacity': 0.35}));
      }
    }
    for (const seg of segments(s.x, i => s.y[i] !== null && s.x[i] !== null)) {
      const pts = seg.map(i => `${X(s.x[i])},${Y(s.y[i])}`).join(' ');
      g.append(sv('polyline', {class: 'mean', points: pts, fill: 'none', stroke: colour, 'stroke-width': s.grey ? 1 : 1.8, 'stroke-dasharray': s.dash ? '5 3' : null}));
      if (!s.grey && (s.marks || seg.length === 1 || (s.n && s.n.some(k => k < s.seeds)))) {
        for (const i of seg) {
          const partial = s.n && s.n[i] < s.seeds;
          if (!s.marks && seg.length > 1 && !partial) continue;
          const c = sv('circle', {cx: X(s.x[i]), cy: Y(s.y[i]), r: 2.8, fill: partial ? '#fff' : colour, stroke: colour, 'stroke-width': 1.3, class: partial ? 'partial' : 'mark'});
          c.append(sv('title', {}, `${s.name} at ${num(s.x[i])}: ${num(s.y[i])}` + (s.n ? ` (n = ${s.n[i]}${partial ? ` of ${s.seeds} seeds` : ''})` : '')));
          g.append(c);
        }
      }
    }
    const last = s.y.length - 1;
    g.append(sv('title', {}, `${s.name}${last >= 0 ? ': ' + num(s.y[last]) + ' at ' + num(s.x[last]) : ''}`));
    svg.append(g);
  }
  return svg;
}

// segments splits the indices of xs into runs where ok holds.
function segments(xs, ok) {
  const out = [];
  let cur = [];
  xs.forEach((_, i) => {
    if (ok(i)) cur.push(i);
    else if (cur.length) { out.push(cur); cur = []; }
  });
  if (cur.length) out.push(cur);
  return out;
}

// ---------- pages ----------

// Each page function renders into main and returns {refresh, live}:
// refresh re-reads what may change, live() says whether to poll.

async function experimentsPage(main) {
  crumbs([]);
  const box = el('div');
  main.replaceChildren(el('h1', {}, 'Experiments'), box);
  let live = false;
  async function refresh() {
    const exps = await api('/api/experiments');
    live = exps.some(e => (e.status.running || 0) > 0);
    if (!exps.length) {
      box.replaceChildren(el('p', {class: 'muted'}, 'The store has no experiments yet: rollout run CONFIG writes them.'));
      return;
    }
    box.replaceChildren(el('table', {id: 'experiments'},
      el('thead', {}, el('tr', {}, ['experiment', 'variants', 'seeds', 'runs', 'status', 'progress', 'tokens', 'last update'].map(h => el('th', {}, h)))),
      el('tbody', {}, exps.map(e => el('tr', {dataset: {experiment: e.name}},
        el('td', {}, el('a', {href: '#/exp/' + enc(e.name)}, e.name)),
        el('td', {}, e.variants.map((v, i) => el('span', {class: 'badge', style: `border-color:${e.colours[i]}`}, v))),
        el('td', {}, e.seeds.join(', ')),
        el('td', {class: 'num'}, e.runs),
        el('td', {}, Object.entries(e.status).sort().map(([s, n]) => statusBadge(s, n))),
        el('td', {}, progressBar(e.steps_done, e.steps_total)),
        el('td', {class: 'num'}, num(e.tokens)),
        el('td', {}, when(e.last_update)))))));
  }
  await refresh();
  return {refresh, live: () => live};
}

// experimentPage draws an experiment: its head, the comparison table with
// its controls, the curves with theirs, the config diff and its runs. It
// is one long function because its parts share the page's state (kept in
// the URL: see setQuery) and redraw one another through closures.
async function experimentPage(main, name, params) {
  crumbs([['experiment ' + name, '#/exp/' + enc(name)]]);
  let detail = await api('/api/experiments/' + enc(name));
  const order = detail.summary.variants;
  const colourOf = v => { const i = order.indexOf(v); return i >= 0 ? detail.summary.colours[i] : variantColour(order, v); };
  const [at0, atArg0] = (params.get('at') || 'final').split(/:(.*)/s);
  const state = {
    at: at0, atArg: atArg0 || '',
    metrics: params.has('metrics') ? params.get('metrics').split(',').filter(m => detail.metrics.includes(m)) : detail.default_metrics.slice(),
    curveMetric: params.get('metric') || detail.default_metrics[0] || detail.metrics[0] || '',
    x: params.get('x') || detail.x_axis || 'step',
    view: params.get('view') === 'diff' ? 'diff' : 'curves',
    group: params.get('group') || '',
    filters: params.getAll('filter'),
    smooth: Number(params.get('smooth') || 0),
    hidden: new Set(params.getAll('hide')),
    vs: params.get('vs') || '',
    diff: params.getAll('diff'),
  };
  function save() {
    setQuery('/exp/' + enc(name), {
      at: state.at === 'final' ? '' : state.at + (state.atArg ? ':' + state.atArg : ''),
      metrics: state.metrics.join(',') === detail.default_metrics.join(',') ? '' : state.metrics.join(','),
      metric: state.curveMetric, x: state.x, view: state.view === 'diff' ? 'diff' : '', group: state.group, filter: state.filters,
      smooth: state.smooth ? String(state.smooth) : '', hide: [...state.hidden], vs: state.vs, diff: state.diff,
    });
  }
  const draws = {report: 0, curves: 0}; // the latest draw of each wins
  const head = el('div');
  const reportBox = el('div', {id: 'report'});
  const curveBox = el('div', {id: 'curves'});
  const diffBox = el('div', {id: 'config-diff'});
  const runsBox = el('div', {id: 'runs'});

  // The report's point: final, best, step:N, tokens:T, train_flops:F.
  const hasArg = k => ['step', 'tokens', 'train_flops'].includes(k);
  const atKind = el('select', {id: 'at-kind', onchange: () => { state.at = atKind.value; state.atArg = ''; atArgInput.value = ''; atArgInput.hidden = !hasArg(state.at); suggest(); save(); drawReport(); }},
    ['final', 'best', 'step', 'tokens', 'train_flops'].map(k => el('option', {value: k, selected: k === state.at}, k)));
  const marks = el('datalist', {id: 'marks'});
  const atArgInput = el('input', {id: 'at-arg', list: 'marks', size: 12, hidden: !hasArg(state.at), value: state.atArg, placeholder: 'value', onchange: () => { state.atArg = atArgInput.value.trim(); save(); drawReport(); }});
  const atHint = el('span', {class: 'muted', id: 'at-hint'});
  function suggest() {
    let vals = [];
    atHint.textContent = '';
    if (state.at === 'tokens') {
      vals = detail.token_marks;
      atHint.textContent = detail.token_marks_recorded ? `evaluation marks: ${vals.map(v => num(v)).join(', ')}` : 'no token marks recorded: cumulative token counts of evaluation rows';
    }
    if (state.at === 'step') { const last = Math.min(...detail.runs.map(r => r.last_step)); vals = Array.from({length: Math.max(0, last + 1)}, (_, i) => i); }
    marks.replaceChildren(...vals.map(v => el('option', {value: v})));
    if (!state.atArg && vals.length) { state.atArg = String(vals[vals.length - 1]); atArgInput.value = state.atArg; }
  }
  // The report's metrics: chips to remove, a menu to add.
  const metricBox = el('span', {id: 'report-metrics'});
  function drawMetricChoice() {
    const add = el('select', {onchange: () => { if (add.value) { state.metrics.push(add.value); save(); drawMetricChoice(); drawReport(); } }},
      el('option', {value: ''}, '+ metric'), detail.metrics.filter(mn => !state.metrics.includes(mn)).map(mn => el('option', {value: mn}, mn)));
    metricBox.replaceChildren(...state.metrics.map(mn => el('span', {class: 'chip', dataset: {metric: mn}, title: 'remove', onclick: () => {
      state.metrics = state.metrics.filter(x => x !== mn); save(); drawMetricChoice(); drawReport();
    }}, mn, ' ×')), add);
  }
  drawMetricChoice();

  // Config keys to group by and filter on: those whose value differs
  // between runs first, then the rest.
  const keyValues = detail.config_keys;
  const varies = k => keyValues[k].length > 1;
  const keys = Object.keys(keyValues).sort((a, b) => (varies(b) - varies(a)) || a.localeCompare(b));
  const keyOptions = sel => keys.map(k => el('option', {value: k, selected: k === sel}, k + (varies(k) ? ` (${keyValues[k].length} values)` : '')));

  const curveMetric = el('select', {id: 'curve-metric', onchange: () => { state.curveMetric = curveMetric.value; save(); drawCurves(); }},
    detail.metrics.map(mn => el('option', {value: mn, selected: mn === state.curveMetric}, mn)));
  const xSel = el('select', {id: 'curve-x', onchange: () => { state.x = xSel.value; save(); drawCurves(); }},
    ['step', 'tokens', 'time'].map(v => el('option', {value: v, selected: v === state.x}, v + (v === detail.x_axis ? ' (budget axis)' : ''))));
  const viewSel = el('select', {id: 'curve-view', onchange: () => { state.view = viewSel.value; save(); drawCurves(); }},
    el('option', {value: 'curves', selected: state.view === 'curves'}, 'mean over seeds'),
    el('option', {value: 'diff', selected: state.view === 'diff'}, 'paired difference from the baseline'));
  const groupSel = el('select', {id: 'group-by', onchange: () => { state.group = groupSel.value; state.hidden.clear(); save(); drawChips(); drawCurves(); }},
    el('option', {value: ''}, 'variant'), keyOptions(state.group));
  const filterKey = el('select', {id: 'filter-key', onchange: () => fillFilterValues()}, el('option', {value: ''}, '+ filter'), keyOptions(''));
  const filterVal = el('select', {id: 'filter-value', hidden: true, onchange: () => {
    if (filterKey.value && filterVal.value) { state.filters.push(filterKey.value + '=' + filterVal.value); filterKey.value = ''; filterVal.hidden = true; save(); drawFilters(); drawCurves(); }
  }});
  function fillFilterValues() {
    const k = filterKey.value;
    filterVal.hidden = !k;
    if (!k) return;
    filterVal.replaceChildren(el('option', {value: ''}, 'value…'), ...keyValues[k].map(v => el('option', {value: v}, v)));
  }
  const filterChips = el('span', {id: 'filters'});
  function drawFilters() {
    filterChips.replaceChildren(...state.filters.map(f => el('span', {class: 'chip', dataset: {filter: f}, title: 'remove', onclick: () => {
      state.filters = state.filters.filter(x => x !== f); save(); drawFilters(); drawCurves();
    }}, f, ' ×')));
  }
  const smoothIn = el('input', {id: 'smooth', type: 'range', min: 0, max: 0.95, step: 0.05, value: state.smooth, oninput: () => {
    state.smooth = Number(smoothIn.value); smoothOut.textContent = state.smooth.toFixed(2); save(); drawCurves(true);
  }});
  const smoothOut = el('span', {class: 'mono'}, state.smooth.toFixed(2));
  const vsSel = el('select', {id: 'compare-exp', onchange: () => { state.vs = vsSel.value; save(); drawCurves(); }}, el('option', {value: ''}, '—'));
  api('/api/experiments').then(exps => vsSel.append(...exps.filter(e => e.name !== name).map(e => el('option', {value: e.name, selected: e.name === state.vs}, e.name)))).catch(() => {});
  const chips = el('span', {id: 'variant-toggles'});
  let lastCurves = null; // the last answer, redrawn as smoothing moves
  function drawChips(names) {
    names = names || (state.group ? [] : order);
    chips.replaceChildren(...names.map(v => el('span', {class: 'chip' + (state.hidden.has(v) ? ' off' : ''), dataset: {variant: v}, onclick: () => {
      state.hidden.has(v) ? state.hidden.delete(v) : state.hidden.add(v); save(); drawChips(names); drawCurves(true);
    }}, el('span', {class: 'swatch', style: `background:${lastCurves ? (lastCurves.own.curves.find(c => c.variant === v) || {}).colour || colourOf(v) : colourOf(v)}`}), v)));
  }

  // Config diff between two variants or two runs.
  const diffOptions = sel => [el('optgroup', {label: 'variants'}, order.map(v => el('option', {value: 'variant:' + v, selected: sel === 'variant:' + v}, v))),
    el('optgroup', {label: 'runs'}, detail.runs.map(r => el('option', {value: 'run:' + r.id, selected: sel === 'run:' + r.id}, `${shortID(r.id)} (${r.variant}, seed ${r.seed})`)))];
  if (state.diff.length !== 2) state.diff = [order.length ? 'variant:' + order[0] : '', order.length > 1 ? 'variant:' + order[1] : ''];
  const diffA = el('select', {id: 'diff-a', onchange: () => { state.diff[0] = diffA.value; save(); drawDiff(); }}, diffOptions(state.diff[0]));
  const diffB = el('select', {id: 'diff-b', onchange: () => { state.diff[1] = diffB.value; save(); drawDiff(); }}, diffOptions(state.diff[1]));

  main.replaceChildren(head,
    el('h2', {}, 'Comparison'),
    el('div', {class: 'controls'}, el('label', {}, 'at', atKind, atArgInput, marks), atHint, el('span', {}, 'metrics ', metricBox)),
    reportBox,
    el('h2', {}, 'Curves'),
    el('div', {class: 'controls'}, el('label', {}, 'metric', curveMetric), el('label', {}, 'x', xSel), el('label', {}, 'show', viewSel),
      el('label', {}, 'group by', groupSel), el('label', {}, 'filter', filterKey, filterVal), filterChips,
      el('label', {title: 'exponential moving average of the mean; the raw mean stays drawn faint'}, 'smoothing', smoothIn, smoothOut),
      el('label', {title: 'draw another experiment\'s curves of the same metric on these axes (dashed)'}, 'compare with', vsSel)),
    el('div', {class: 'controls'}, chips),
    curveBox,
    el('h2', {}, 'Config diff'),
    el('div', {class: 'controls'}, diffA, el('span', {}, 'vs'), diffB),
    diffBox,
    el('h2', {}, 'Runs'),
    runsBox);
  drawChips();
  drawFilters();
  suggest();

  function drawHead() {
    const e = detail.experiment, s = detail.summary;
    head.replaceChildren(el('h1', {}, e.name),
      el('p', {}, Object.entries(s.status).sort().map(([st, n]) => statusBadge(st, n)), ' ', progressBar(s.steps_done, s.steps_total),
        el('span', {class: 'muted'}, ` · ${s.runs} runs · variants ${s.variants.join(', ')} · seeds ${s.seeds.join(', ')} · baseline ${e.baseline || s.variants[0] || '—'} · budget axis ${detail.x_axis} · updated `), when(s.last_update)));
  }

  async function drawReport() {
    let at = state.at;
    if (hasArg(at)) {
      if (!state.atArg) { reportBox.replaceChildren(el('p', {class: 'muted'}, `give a value for ${at}`)); return; }
      at += ':' + state.atArg;
    }
    const q = new URLSearchParams({at});
    state.metrics.forEach(mn => q.append('metric', mn));
    const seq = ++draws.report;
    let view;
    try {
      view = reportTable(await api(`/api/experiments/${enc(name)}/report?${q}`), order, colourOf);
    } catch (err) {
      view = errorBox(err);
    }
    if (seq === draws.report) reportBox.replaceChildren(view); // else a later choice is being drawn
  }

  function curvesQuery(exp) {
    const q = new URLSearchParams({metric: state.curveMetric, x: state.x});
    if (state.view === 'diff') q.set('kind', 'diff');
    if (exp === name) {
      if (state.group) q.set('group', state.group);
      state.filters.forEach(f => q.append('filter', f));
    }
    return `/api/experiments/${enc(exp)}/curves?${q}`;
  }

  // drawCurves fetches the curves (again unless only smoothing or the
  // shown variants changed) and draws them: one chart, or one per curve
  // (the others grey behind) when more than five are shown.
  async function drawCurves(redraw) {
    if (!state.curveMetric) { curveBox.replaceChildren(el('p', {class: 'muted'}, 'no metrics recorded yet')); return; }
    const seq = ++draws.curves;
    let view;
    try {
      if (!redraw || !lastCurves) {
        const own = await api(curvesQuery(name));
        let other = null, otherErr = null;
        if (state.vs) { try { other = await api(curvesQuery(state.vs)); } catch (err) { otherErr = err; } }
        if (seq !== draws.curves) return;
        lastCurves = {own, other, otherErr};
        if (state.group) drawChips(own.curves.map(c => c.variant));
      }
      view = curvesView(lastCurves);
    } catch (err) {
      lastCurves = null;
      view = errorBox(err);
    }
    if (seq === draws.curves) curveBox.replaceChildren(view);
  }

  function curvesView({own, other, otherErr}) {
    const diff = own.kind === 'diff';
    const toSeries = (k, label, colour, dash) => ({name: label, colour, x: k.x, y: smooth(k.mean, state.smooth), raw: state.smooth > 0 ? k.mean : null,
      lo: k.lo, hi: k.hi, n: k.n, seeds: k.seeds, marks: k.marks || k.x.length < 40, dash});
    let series = own.curves.filter(k => !state.hidden.has(k.variant) && k.x.length).map(k => toSeries(k, k.variant, k.colour, false));
    if (other) {
      const base = order.length;
      series = series.concat(other.curves.filter(k => k.x.length).map((k, i) => toSeries(k, `${state.vs}/${k.variant}`, PALETTE[(base + i) % PALETTE.length], true)));
    }
    const xlabel = {step: 'step (optimizer updates)', tokens: 'sampled tokens (cumulative)' + (series.some(s => s.marks) ? '; markers at evaluation marks' : ''), time: 'wall time (s)'}[own.x];
    const ylabel = (diff ? 'Δ ' : '') + own.info.axis_label;
    const range = diff ? null : [own.info.lo, own.info.hi];
    const title = (diff ? `${own.info.label}: variant − ${own.baseline}, paired by seed` : own.info.label) + (own.group_by ? ` · grouped by ${own.group_by}` : '');
    const common = {xlabel, ylabel, integerX: own.x !== 'time', zero: diff, range, metric: own.metric};
    let charts;
    if (series.length > 5) {
      charts = el('div', {class: 'multiples', id: 'small-multiples'}, series.map(s => chart(
        series.filter(o => o !== s).map(o => Object.assign({}, o, {grey: true, raw: null})).concat([s]),
        Object.assign({}, common, {width: 400, height: 230, title: s.name}))));
    } else {
      charts = chart(series, Object.assign({}, common, {width: 860, height: 380, title}));
    }
    const legend = el('div', {class: 'legend-row'}, series.map(s => el('span', {class: 'legend-item'},
      el('span', {class: 'swatch' + (s.dash ? ' dashed' : ''), style: `background:${s.colour}`}), s.name)));
    const notes = own.notes.concat(other ? other.notes.map(n => `${state.vs}/${n}`) : []);
    const hidden = own.curves.filter(k => state.hidden.has(k.variant)).map(k => k.variant);
    if (hidden.length) notes.push(`hidden here: ${hidden.join(', ')}`);
    if (otherErr) notes.push(`${state.vs}: ${otherErr.message}`);
    if (series.some(s => s.n && s.n.some(k => k < s.seeds))) notes.push('hollow points average fewer seeds than their curve has');
    if (state.smooth > 0) notes.push(`lines smoothed (EMA ${state.smooth.toFixed(2)}); the raw means drawn faint, bands unsmoothed`);
    return el('div', {}, charts, legend,
      el('p', {class: 'caption', id: 'curve-caption'}, own.caption + (other ? ` · ${state.vs} dashed: ${other.caption}` : '')),
      notes.length ? el('ul', {class: 'notes', id: 'curve-notes'}, notes.map(n => el('li', {}, n))) : '');
  }

  async function drawDiff() {
    const [a, b] = state.diff;
    if (!a || !b) { diffBox.replaceChildren(el('p', {class: 'muted'}, 'choose two variants or runs')); return; }
    const [ka, va] = a.split(/:(.*)/s), [kb, vb] = b.split(/:(.*)/s);
    let url;
    if (ka === 'variant' && kb === 'variant') url = `/api/experiments/${enc(name)}/config-diff?variant=${enc(va)}&variant=${enc(vb)}`;
    else {
      const runOf = (k, v) => k === 'run' ? v : (detail.runs.find(r => r.variant === v) || {}).id;
      url = `/api/config-diff?run=${enc(runOf(ka, va) || '')}&run=${enc(runOf(kb, vb) || '')}`;
    }
    try {
      const d = await api(url);
      diffBox.replaceChildren(!d.diffs.length ? el('p', {class: 'muted', id: 'diff-none'}, 'the two configs are the same') :
        el('table', {id: 'diff-table'}, el('thead', {}, el('tr', {}, el('th', {}, 'key'), el('th', {}, a.replace(':', ' ')), el('th', {}, b.replace(':', ' ')))),
          el('tbody', {}, d.diffs.map(k => el('tr', {dataset: {key: k.key}}, el('td', {class: 'mono'}, k.key), el('td', {class: 'mono'}, k.a), el('td', {class: 'mono'}, k.b))))));
    } catch (err) {
      diffBox.replaceChildren(errorBox(err));
    }
  }

  function drawRuns() {
    runsBox.replaceChildren(runsTable(detail.runs, colourOf, detail.notes));
  }

  async function refresh(first) {
    if (!first) detail = await api('/api/experiments/' + enc(name));
    drawHead(); drawRuns();
    await Promise.all([drawReport(), drawCurves(), first ? drawDiff() : null]);
  }
  save();
  await refresh(true);
  return {refresh: () => refresh(false), live: () => detail.runs.some(r => r.status === 'running')};
}

// reportTable draws the answer of the report endpoint: per variant and
// metric the mean ± half-width of the 95% t-interval, and the p-value of
// the test against the baseline.
function reportTable(rep, order, colourOf) {
  const cols = rep.metric_names;
  return el('div', {},
    el('p', {class: 'caption', id: 'report-axis'}, `${rep.axis} · baseline ${rep.baseline} · mean ± 95% t-interval over seeds; p of the t-test against the baseline`),
    el('table', {id: 'report-table'},
      el('thead', {}, el('tr', {}, el('th', {}, 'variant'), el('th', {class: 'num'}, 'runs'),
        cols.map(c => [el('th', {class: 'num'}, c), el('th', {class: 'num'}, 'p')]))),
      el('tbody', {}, rep.variants.map(row => el('tr', {dataset: {variant: row.variant}},
        el('td', {}, el('span', {class: 'swatch', style: `background:${colourOf(row.variant)}`}), ' ', row.variant),
        el('td', {class: 'num'}, row.runs, row.unfinished ? el('span', {class: 'muted', title: 'runs not finished'}, ` (${row.unfinished} unfinished)`) : ''),
        row.metrics.map(c => {
          const half = c.mean !== null && c.ci_hi !== null ? c.ci_hi - c.mean : null;
          const p = c.test ? c.test.p : null;
          return [
            el('td', {class: 'num cell', dataset: {metric: c.metric, mean: c.mean === null ? '' : String(c.mean), n: c.n},
              title: `n=${c.n}${c.missing ? `, ${c.missing} missing` : ''}; values ${c.values.map(v => num(v)).join(', ')}`},
              num(c.mean), half !== null && half > 0 ? el('span', {class: 'ci'}, ' ± ' + num(half, 2)) : ''),
            el('td', {class: 'num' + (p !== null && p < 0.05 ? ' sig' : ''), title: c.test ? `${c.test.kind} t-test, diff ${num(c.test.diff)} [${num(c.test.diff_lo)}, ${num(c.test.diff_hi)}]` : ''}, p === null ? '' : p < 0.001 ? '<0.001' : num(p, 2)),
          ];
        }))))));
}

function runsTable(runs, colourOf, notes) {
  const notesOf = id => (notes || []).filter(n => n.run === id);
  return el('table', {class: 'runs'},
    el('thead', {}, el('tr', {}, ['run', 'variant', 'seed', 'status', 'progress', 'tokens', 'time', 'started', 'notes', ''].map(h => el('th', {}, h)))),
    el('tbody', {}, runs.map(r => el('tr', {dataset: {run: r.id}},
      el('td', {class: 'mono'}, el('a', {href: '#/run/' + enc(r.id)}, shortID(r.id))),
      el('td', {}, el('span', {class: 'swatch', style: `background:${colourOf(r.variant)}`}), ' ', r.variant),
      el('td', {class: 'num'}, r.seed),
      el('td', {}, statusBadge(r.status), r.error ? el('span', {class: 'muted', title: r.error}, ' ⚠') : ''),
      el('td', {dataset: {field: 'progress'}}, runProgress(r)),
      el('td', {class: 'num'}, num(r.tokens)),
      el('td', {class: 'num'}, duration(r.elapsed_ns)),
      el('td', {}, when(r.start)),
      el('td', {class: 'note-cell', dataset: {field: 'notes'}}, notesOf(r.id).map(n => n.text).join(' · ')),
      el('td', {}, el('a', {href: `#/tree/${enc(r.id)}`}, 'trees'))))));
}

// runPage draws a run: its record and notes, evaluations, a curve of every
// metric, the sample table of a step and its resolved config. The axis and
// the sample table's step are kept in the URL.
async function runPage(main, id, params) {
  let detail = await api('/api/runs/' + enc(id));
  const r0 = detail.run;
  crumbs([['experiment ' + r0.experiment, '#/exp/' + enc(r0.experiment)], ['run ' + shortID(id), '#/run/' + enc(id)]]);
  const state = {x: params.get('x') || 'step', step: params.has('step') ? Number(params.get('step')) : null};
  const save = () => setQuery('/run/' + enc(id), {x: state.x === 'step' ? '' : state.x, step: state.step === null ? '' : state.step});
  const head = el('div'), charts = el('div', {class: 'charts', id: 'run-charts'}), evals = el('div', {id: 'evals'});
  const notesBox = el('div', {id: 'run-notes'}), samplesBox = el('div', {id: 'samples'});
  const xSel = el('select', {id: 'run-x', onchange: () => { state.x = xSel.value; save(); drawCharts(); }}, ['step', 'tokens', 'time'].map(v => el('option', {value: v, selected: v === state.x}, v)));
  const stepIn = el('input', {id: 'sample-step', type: 'number', min: 1, size: 5, onchange: () => { state.step = Number(stepIn.value); save(); drawSamples(); }});
  const config = el('pre', {id: 'config'});
  let rows = [];
  main.replaceChildren(head, notesBox,
    el('h2', {}, 'Evaluations'), evals,
    el('h2', {}, 'Metrics'), el('div', {class: 'controls'}, el('label', {}, 'x', xSel)), charts,
    el('h2', {}, 'Samples'), el('div', {class: 'controls'}, el('label', {}, 'step', stepIn),
      el('span', {class: 'muted'}, 'every response the step sampled: reward and its advantage (mean over the response\'s tokens; the range when segments differ)')), samplesBox,
    el('h2', {}, 'Resolved config'), config);

  function drawHead() {
    const r = detail.run;
    const kv = [
      ['experiment', el('a', {href: '#/exp/' + enc(r.experiment)}, r.experiment)], ['variant', r.variant], ['seed', r.seed],
      ['status', [statusBadge(r.status), r.error ? ' ' + r.error : '']], ['progress', runProgress(r)],
      ['last step', el('span', {dataset: {field: 'last_step'}}, r.last_step)], ['tokens', el('span', {title: r.tokens}, num(r.tokens))],
      ['wall time', duration(r.elapsed_ns)], ['started', new Date(r.start).toLocaleString()], ['ended', r.end ? new Date(r.end).toLocaleString() : '—'],
      ['resumes', r.resumes || 0], ['host', r.host], ['version', r.version],
      ['rollout trees', el('a', {href: '#/tree/' + enc(r.id)}, 'open the tree viewer')],
    ];
    head.replaceChildren(el('h1', {class: 'mono'}, r.id), el('dl', {class: 'kv'}, kv.map(([k, v]) => [el('dt', {}, k), el('dd', {}, v)])));
    config.textContent = r.config || '(no config recorded)';
    notesBox.replaceChildren(...(detail.notes.length ? [el('h2', {}, 'Notes'), el('ul', {class: 'run-notes'}, detail.notes.map(n => el('li', {}, el('span', {class: 'muted'}, when(n.time), ' · '), n.text)))] :
      [el('p', {class: 'muted'}, 'no notes: ', el('code', {}, `rollout note ${r.id} TEXT`), ' adds one')]));
  }

  function xOf(row) { return state.x === 'step' ? row.step : state.x === 'tokens' ? row.tokens : row.elapsed_ns / 1e9; }

  function drawCharts() {
    const colour = PALETTE[0];
    charts.replaceChildren(...detail.metrics.map(mn => {
      const pts = rows.filter(row => mn in row.values);
      const info = detail.metric_info[mn] || {};
      return chart([{name: mn, colour, x: pts.map(xOf), y: pts.map(row => row.values[mn]), marks: pts.length < 40}],
        {width: 330, height: 190, title: mn + (info.unit ? ` (${info.unit})` : ''), metric: mn, integerX: state.x !== 'time', range: [info.lo ?? null, info.hi ?? null]});
    }));
  }

  function drawEvals() {
    const evRows = rows.filter(row => Object.keys(row.values).some(k => k.startsWith('eval/')));
    const names = [...new Set(evRows.flatMap(row => Object.keys(row.values).filter(k => k.startsWith('eval/'))))].sort();
    if (!evRows.length) { evals.replaceChildren(el('p', {class: 'muted'}, 'no evaluations recorded yet')); return; }
    evals.replaceChildren(el('table', {id: 'eval-table'},
      el('thead', {}, el('tr', {}, el('th', {class: 'num'}, 'step'), el('th', {class: 'num'}, 'tokens'), names.map(n => el('th', {class: 'num'}, n)))),
      el('tbody', {}, evRows.map(row => el('tr', {},
        el('td', {class: 'num'}, el('a', {href: `#/tree/${enc(id)}?step=${row.step}`}, row.step)),
        el('td', {class: 'num'}, num(row.tokens)),
        names.map(n => el('td', {class: 'num'}, n in row.values ? num(row.values[n]) : '')))))));
  }

  let sampleSeq = 0;
  async function drawSamples() {
    const step = state.step === null ? Math.max(1, detail.run.last_step) : state.step;
    stepIn.value = step; stepIn.max = Math.max(1, detail.run.last_step);
    const seq = ++sampleSeq;
    let view;
    try {
      const ss = await api(`/api/runs/${enc(id)}/steps/${step}/samples`);
      view = !ss.length ? el('p', {class: 'muted'}, `step ${step} sampled no groups${step === 0 ? ' (step 0 is the base policy\'s evaluation)' : ''}`) :
        el('table', {id: 'sample-table'},
          el('thead', {}, el('tr', {}, ['group', 'leaf', 'prompt', 'response', 'reward', 'advantage', 'reason', ''].map(h => el('th', {}, h)))),
          el('tbody', {}, ss.map(x => el('tr', {class: x.filtered ? 'filtered' : '', dataset: {group: x.group, leaf: x.leaf}},
            el('td', {class: 'num'}, x.group), el('td', {class: 'num'}, x.leaf),
            el('td', {class: 'mono clip', title: x.prompt}, x.prompt),
            el('td', {class: 'mono clip', title: x.response}, x.response),
            el('td', {class: 'num ' + (x.reward === null ? '' : x.reward > 0 ? 'rw1' : 'rw0'), dataset: {field: 'reward'}}, x.reward === null ? 'unscored' : num(x.reward, 3)),
            el('td', {class: 'num', dataset: {field: 'advantage'}}, num(x.advantage, 3), x.advantage_lo !== x.advantage_hi ? el('span', {class: 'ci'}, ` [${num(x.advantage_lo, 3)}, ${num(x.advantage_hi, 3)}]`) : ''),
            el('td', {}, x.reason, x.filtered ? el('span', {class: 'muted', title: 'dropped from the update: all rewards equal'}, ' (filtered)') : ''),
            el('td', {}, el('a', {href: `#/tree/${enc(id)}?step=${step}&group=${x.group}`, class: 'tree-link'}, 'tree'))))));
    } catch (err) {
      view = errorBox(err);
    }
    if (seq === sampleSeq) samplesBox.replaceChildren(view);
  }

  async function refresh(first) {
    if (!first) detail = await api('/api/runs/' + enc(id));
    rows = await api(`/api/runs/${enc(id)}/metrics`);
    drawHead(); drawEvals(); drawCharts();
    if (first || state.step === null) await drawSamples();
  }
  save();
  await refresh(true);
  return {refresh: () => refresh(false), live: () => detail.run.status === 'running'};
}

// ---------- tree viewer ----------

// treePage draws the tree viewer of a run: the step, group and compared
// group come from the URL (params), so each view has an address; its
// controls change the URL. Long for the same reason as experimentPage.
async function treePage(main, id, params) {
  let detail = await api('/api/runs/' + enc(id));
  const run = detail.run;
  crumbs([['experiment ' + run.experiment, '#/exp/' + enc(run.experiment)], ['run ' + shortID(id), '#/run/' + enc(id)], ['trees', location.hash]]);
  const state = {
    step: params.has('step') ? Number(params.get('step')) : Math.max(0, run.last_step),
    group: Number(params.get('group') || 0),
    vs: params.has('vs') ? Number(params.get('vs')) : null,
  };
  let groups = [];
  const text = new Map();
  const stepIn = el('input', {id: 'tree-step', type: 'number', min: 0, max: Math.max(0, run.last_step), value: state.step, size: 5, onchange: () => go({step: Number(stepIn.value), group: 0, vs: state.vs === null ? null : 1})});
  const groupSel = el('select', {id: 'tree-group', onchange: () => go({group: Number(groupSel.value)})});
  const vsBox = el('input', {type: 'checkbox', id: 'tree-compare', checked: state.vs !== null, onchange: () => go({vs: vsBox.checked ? otherGroup(state.group) : null})});
  const vsSel = el('select', {id: 'tree-vs', onchange: () => go({vs: Number(vsSel.value)})});
  const body = el('div', {id: 'tree-body'});
  main.replaceChildren(el('h1', {}, 'Rollout trees ', el('span', {class: 'mono muted'}, shortID(id))),
    el('div', {class: 'controls'},
      el('label', {}, 'step', el('button', {onclick: () => go({step: state.step - 1})}, '‹'), stepIn, el('button', {onclick: () => go({step: state.step + 1})}, '›'),
        el('span', {class: 'muted'}, ` of 0–${run.last_step}`)),
      el('label', {}, 'group', groupSel),
      el('label', {}, vsBox, 'compare with', vsSel),
      el('button', {onclick: () => toggleAll(true)}, 'expand all'), el('button', {onclick: () => toggleAll(false)}, 'collapse all'),
      el('span', {class: 'legend'}, 'entropy 0', el('span', {class: 'ramp', style: `background:linear-gradient(to right, ${entropyColour(0, 1)}, ${entropyColour(0.5, 1)}, ${entropyColour(1, 1)})`}), 'max')),
    body);

  function otherGroup(g) { return groups.length > 1 ? (g + 1) % groups.length : g; }

  // go changes the state through the URL, so each view has its own address.
  function go(change) {
    const s = Object.assign({}, state, change);
    s.step = Math.max(0, Math.min(s.step, Math.max(0, run.last_step)));
    const q = new URLSearchParams({step: s.step, group: s.group});
    if (s.vs !== null) q.set('vs', s.vs);
    location.hash = `#/tree/${enc(id)}?${q}`;
  }

  function toggleAll(open) { body.querySelectorAll('details').forEach(d => { d.open = open; }); }

  groups = await api(`/api/runs/${enc(id)}/steps/${state.step}/groups`);
  if (!groups.length) {
    body.replaceChildren(el('p', {class: 'muted'}, `step ${state.step} has no rollout groups${state.step === 0 ? ' (step 0 is the base policy\'s evaluation: try step 1)' : ''}`));
  } else {
    const opts = () => groups.map((g, i) => el('option', {value: i}, groupLabel(g, i)));
    groupSel.replaceChildren(...opts());
    vsSel.replaceChildren(...opts());
    state.group = Math.min(state.group, groups.length - 1);
    groupSel.value = state.group;
    if (state.vs !== null) { state.vs = Math.min(state.vs, groups.length - 1); vsSel.value = state.vs; }
    vsSel.disabled = state.vs === null;
    const shown = state.vs === null ? [state.group] : [state.group, state.vs];
    const ids = new Set();
    for (const i of shown) {
      groups[i].prompt_tokens.forEach(t => ids.add(t));
      groups[i].nodes.forEach(n => n.tokens.forEach(t => ids.add(t)));
    }
    const need = [...ids].filter(t => !text.has(t));
    if (need.length) {
      const txt = await api('/api/tokens?ids=' + need.join(','));
      need.forEach((t, i) => text.set(t, txt[i]));
    }
    body.replaceChildren(el('div', {class: 'pair' + (shown.length > 1 ? ' two' : '')}, shown.map(i => groupView(groups[i], i, text))));
  }
  return {refresh: async () => {}, live: () => false};
}

function groupLabel(g, i) {
  const rewards = g.leaves.map(l => l.reward).filter(r => r !== null);
  const mean = rewards.length ? rewards.reduce((a, b) => a + b, 0) / rewards.length : null;
  return `${i}: ${g.prompt.length > 28 ? g.prompt.slice(0, 27) + '…' : g.prompt} — ${g.leaves.length} leaves, reward ${num(mean, 3)}${g.filtered ? ', filtered' : ''}`;
}

// entropyColour maps an entropy to a background: white at 0 to red at max.
function entropyColour(h, max) {
  const f = max > 0 ? Math.max(0, Math.min(1, h / max)) : 0;
  return `hsl(${Math.round(50 - 50 * f)}, 95%, ${Math.round(97 - 35 * f)}%)`;
}

// groupView draws one group: its header and each tree, every node a
// collapsible block with its tokens (coloured by entropy, the fork points
// of its children marked), the leaves ending in it and its children. Its
// nested functions share the group's indexes (children, path offsets,
// leaves by node), hence its length.
function groupView(g, index, text) {
  let maxH = 0;
  g.nodes.forEach(n => n.entropies.forEach(h => { if (h !== null && h > maxH) maxH = h; }));
  const byID = new Map(g.nodes.map(n => [n.id, n]));
  const kids = new Map(), roots = [];
  for (const n of g.nodes) {
    if (n.parent === null || !byID.has(n.parent)) roots.push(n);
    else { if (!kids.has(n.parent)) kids.set(n.parent, []); kids.get(n.parent).push(n); }
  }
  for (const k of kids.values()) k.sort((a, b) => a.fork_at - b.fork_at || a.id - b.id);
  // offset is where a node's tokens start in its response's path.
  const offset = new Map();
  const setOffset = (n, o) => { offset.set(n.id, o); (kids.get(n.id) || []).forEach(c => setOffset(c, o + c.fork_at)); };
  roots.forEach(r => setOffset(r, 0));
  const leavesAt = new Map();
  g.leaves.forEach((l, i) => { if (!leavesAt.has(l.node)) leavesAt.set(l.node, []); leavesAt.get(l.node).push([l, i]); });
  const tokText = t => text.has(t) ? text.get(t) : `<${t}>`;

  function nodeView(n) {
    const children = kids.get(n.id) || [];
    const forkAt = new Map();
    children.forEach(c => { if (!forkAt.has(c.fork_at)) forkAt.set(c.fork_at, []); forkAt.get(c.fork_at).push(c); });
    const toks = el('div', {class: 'toks'});
    n.tokens.forEach((t, j) => {
      if (forkAt.has(j)) toks.append(forkMark(forkAt.get(j)));
      const h = n.entropies[j], lp = n.logprobs[j];
      toks.append(el('span', {class: 'tok', style: `background:${entropyColour(h === null ? 0 : h, maxH)}`,
        title: `token ${t} at ${offset.get(n.id) + j}: entropy ${num(h, 3)} nats, logprob ${num(lp, 3)}`}, tokText(t)));
    });
    if (forkAt.has(n.tokens.length)) toks.append(forkMark(forkAt.get(n.tokens.length)));
    const head = el('span', {class: 'head'}, el('b', {}, `node ${n.id}`),
      n.parent === null ? ' · root' : ` · forks from ${n.parent} at ${n.fork_at}`,
      n.fork_score !== null ? ` (score ${num(n.fork_score, 3)})` : '',
      ` · iteration ${n.iteration} · ${n.tokens.length} tokens`, n.finish ? ` · ${n.finish}` : '',
      children.length ? ` · ${children.length} children` : '');
    const leaves = (leavesAt.get(n.id) || []).map(([l, i]) => leafView(l, i, n));
    return el('li', {class: 'node', dataset: {node: n.id}},
      el('details', {open: true}, el('summary', {}, head), toks, leaves,
        children.length ? el('ul', {}, children.map(nodeView)) : ''));
  }

  function forkMark(children) {
    const title = children.map(c => `node ${c.id}${c.fork_score !== null ? ', score ' + num(c.fork_score, 3) : ''}`).join('; ');
    return el('span', {class: 'fork', title: 'fork: ' + title}, '|' + children.map(c => c.id).join(','));
  }

  function leafView(l, i, n) {
    const o = offset.get(n.id);
    const adv = (l.advantages || []).slice(o, o + n.tokens.length).filter(a => a !== null);
    const lo = Math.min(...adv), hi = Math.max(...adv);
    const advText = !adv.length ? '—' : lo === hi ? num(lo, 3) : `${num(lo, 3)}…${num(hi, 3)}`;
    const cls = l.reward === null ? '' : l.reward > 0 ? 'rw1' : 'rw0';
    const terms = l.terms ? Object.entries(l.terms).map(([k, v]) => `${k} ${num(v, 3)}`).join(', ') : '';
    return el('div', {class: 'leaf', dataset: {leaf: i}}, '↳ leaf ', i, ': ', el('span', {class: 'mono'}, JSON.stringify(l.text)),
      ' · reward ', el('span', {class: cls}, l.reward === null ? 'unscored' : num(l.reward, 3)),
      terms ? ` (${terms})` : '', l.reason ? ` · ${l.reason}` : '', ' · advantage ', advText);
  }

  const rewards = g.leaves.map(l => l.reward).filter(r => r !== null);
  const mean = rewards.length ? rewards.reduce((a, b) => a + b, 0) / rewards.length : null;
  const b = g.budget;
  return el('div', {class: 'group' + (g.filtered ? ' filtered' : ''), dataset: {group: index}},
    el('h3', {}, `group ${index}`, g.filtered ? el('span', {class: 'badge st-running', title: 'dropped from the update: all rewards equal'}, ' filtered') : ''),
    el('div', {class: 'mono'}, 'prompt ', JSON.stringify(g.prompt)),
    el('div', {class: 'muted'}, `${g.strategy} · ${g.nodes.length} nodes, ${g.leaves.length} leaves · mean reward ${num(mean, 3)} · generated ${b.generated_tokens} tokens` +
      (b.limit !== null ? ` of ${b.limit} (unspent ${b.unspent})` : '') + ` · prefill ${b.prefill_tokens} · ${num(b.flops)} FLOPs` +
      (b.skipped_branches ? ` · ${b.skipped_branches} branches skipped` : '') + (g.missing_forks ? ` · ${g.missing_forks} forks missing` : '')),
    el('div', {class: 'tree'}, el('ul', {}, roots.map(nodeView))));
}

// ---------- router and polling ----------

function crumbs(items) {
  const nav = document.getElementById('crumbs');
  nav.replaceChildren(...items.flatMap(([label, href], i) => [i ? el('span', {class: 'sep'}, '›') : el('span', {class: 'sep'}, '/'), el('a', {href}, label)]));
}

let current = null, timer = null, generation = 0;

async function route() {
  const gen = ++generation;
  const main = document.getElementById('app');
  const [path, query] = location.hash.replace(/^#/, '').split('?');
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  const params = new URLSearchParams(query || '');
  current = null;
  try {
    let page;
    if (parts[0] === 'exp' && parts[1]) page = await experimentPage(main, parts[1], params);
    else if (parts[0] === 'run' && parts[1]) page = await runPage(main, parts[1], params);
    else if (parts[0] === 'tree' && parts[1]) page = await treePage(main, parts[1], params);
    else page = await experimentsPage(main);
    if (gen === generation) current = page;
  } catch (err) {
    if (gen === generation) main.replaceChildren(errorBox(err));
  }
  document.body.dataset.ready = gen;
  showLive();
}

function showLive() {
  document.getElementById('live').hidden = !(current && current.live());
}

// poll refreshes a page that says it is live, one refresh at a time.
async function poll() {
  const page = current;
  if (page && page.live()) {
    try { await page.refresh(); } catch (err) { /* keep the last view; the next poll retries */ }
    document.body.dataset.refreshed = Date.now();
  }
  showLive();
  timer = setTimeout(poll, POLL_MS);
}

// The palette comes from the server (report.Palette), so that the
// dashboard draws each variant in the colour of rollout plot's figures.
async function start() {
  try { PALETTE = (await api('/api/style')).palette; } catch (err) { /* keep the fallback; pages still draw */ }
  window.addEventListener('hashchange', route);
  await route();
  timer = setTimeout(poll, POLL_MS);
}
start();
