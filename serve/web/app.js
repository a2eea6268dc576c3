// The live view of `tagflow serve` (protocol: docs/serve.md).
//
// At load the page reads /api/graph and builds one panel per measurement, then shows every
// snapshot that arrives on the WebSocket /ws. Plots are uPlot instances that are created once
// and fed with setData(); they are rebuilt only when what they show changes shape (a toggle,
// a different number of channels), never per message.
//
// Test hooks (tests/serve/browser/browser_test.mjs relies on them): every panel is
// <section class="measurement" data-name data-kind> with data-has-data, data-updates and
// data-capture-ps; buttons carry data-action; #run-state, #stop-run, #download, #profile
// (with data-wall-mtags-per-s) and #source; #channels has a row <tr data-channel data-key>
// per live setting of a virtual channel, with its value now in [data-field="value"], an
// input and a Set button.
'use strict';

// ---------------------------------------------------------------------------------------------
// URLs: every request carries the page's token, if it has one.

const TOKEN = new URLSearchParams(location.search).get('token');

// Resolved against the page, not the host root, so the page also works behind a path prefix.
function apiUrl(path) {
  const url = new URL(path, location.href);
  url.search = '';
  if (TOKEN) url.searchParams.set('token', TOKEN);
  return url.toString();
}

function wsUrl() {
  const url = new URL(apiUrl('ws'));
  url.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
  return url.toString();
}

// ---------------------------------------------------------------------------------------------
// Formatting.

const PREFIXES = [[1e12, 'T'], [1e9, 'G'], [1e6, 'M'], [1e3, 'k'], [1, ''], [1e-3, 'm'],
  [1e-6, 'µ'], [1e-9, 'n'], [1e-12, 'p'], [1e-15, 'f'], [1e-18, 'a']];

const isNum = (v) => typeof v === 'number' && Number.isFinite(v);

// 1234567 Hz -> "1.23 MHz".
function fmtSI(v, unit, digits = 3) {
  if (!isNum(v)) return '–';
  if (v === 0) return `0 ${unit}`;
  const a = Math.abs(v);
  for (const [f, p] of PREFIXES) {
    // 0.9995: a value that rounds up to the next prefix is shown with it ("1.00 k", not "1000").
    if (a >= f * 0.9995) return `${(v / f).toPrecision(digits)} ${p}${unit}`;
  }
  return `${v.toExponential(digits - 1)} ${unit}`;
}

function fmtInt(v) {
  return isNum(v) ? Math.round(v).toLocaleString('en-US') : '–';
}

function fmtValue(v) {
  if (v === null || v === undefined) return '–';
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  if (typeof v === 'number') return Number.isInteger(v) ? fmtInt(v) : String(+v.toPrecision(6));
  if (Array.isArray(v)) return `[${v.map(fmtValue).join(', ')}]`;
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

function fmtSeconds(ps) {
  return isNum(ps) ? `${(ps * 1e-12).toFixed(3)} s` : '–';
}

// Axis ticks: plain numbers in a readable range, large ones with a prefix ("250k", "10M"),
// small ones as short exponentials ("1e-12").
function fmtTick(v) {
  if (v == null) return ''; // a tick uPlot leaves unlabelled
  if (v === 0) return '0';
  const a = Math.abs(v);
  if (a >= 1e-3 && a < 1e4) return String(+v.toPrecision(6));
  if (a >= 1e4 && a < 1e15) {
    const [f, p] = PREFIXES.find(([f]) => a >= f);
    return `${+(v / f).toPrecision(4)}${p}`;
  }
  return (+v.toPrecision(3)).toExponential().replace('e+', 'e');
}

// The unit in which times of at most `maxS` seconds read best.
function timeUnit(maxS) {
  for (const [f, u] of [[1, 's'], [1e-3, 'ms'], [1e-6, 'µs'], [1e-9, 'ns']]) {
    if (maxS >= f) return { f, u };
  }
  return { f: 1e-12, u: 'ps' };
}

// ---------------------------------------------------------------------------------------------
// Arrays of a snapshot: {unit, shape, data} with data row-major and NaN sent as null.

function rows(a) {
  if (!a || !Array.isArray(a.data)) return [];
  const shape = a.shape && a.shape.length ? a.shape : [a.data.length];
  if (shape.length < 2) return [a.data];
  const n = shape[shape.length - 1];
  const out = [];
  for (let r = 0; r * n < a.data.length; r++) out.push(a.data.slice(r * n, (r + 1) * n));
  return out;
}

// A plottable y: null for NaN (a gap), and for values a log axis cannot show.
function yVal(v, log) {
  return isNum(v) && !(log && v <= 0) ? v : null;
}

function maxAbs(values) {
  let m = 0;
  for (const v of values) if (isNum(v) && Math.abs(v) > m) m = Math.abs(v);
  return m;
}

function hasNonZero(series) {
  return series.some((ys) => ys.some((v) => isNum(v) && v !== 0));
}

// Points with a usable x, sorted by x (uPlot needs ascending x): [xs, ys0, ys1, ...].
function table(xs, ysList, logX) {
  const idx = [];
  for (let i = 0; i < xs.length; i++) {
    if (isNum(xs[i]) && !(logX && xs[i] <= 0)) idx.push(i);
  }
  idx.sort((a, b) => xs[a] - xs[b]);
  return [idx.map((i) => xs[i]), ...ysList.map((ys) => idx.map((i) => (i < ys.length ? ys[i] : null)))];
}

// ---------------------------------------------------------------------------------------------
// Plots.

const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2',
  '#17becf', '#7f7f7f', '#bcbd22'];
const PLOT_HEIGHT = 260;

// Log scales: whole decades around the data, and a fixed decade while there is none (uPlot
// cannot range a log scale over no data).
function logRange(u, min, max) {
  if (!(min > 0) || !(max > 0)) return [1, 10];
  return uPlot.rangeLog(min, max, 10, true);
}

function linRange(u, min, max) {
  if (!isNum(min) || !isNum(max)) return [0, 1];
  return uPlot.rangeNum(min, max, 0.1, true);
}

// x axes end at the data; y axes get some room around it.
function xRange(u, min, max) {
  return isNum(min) && isNum(max) && min < max ? [min, max] : linRange(u, min, max);
}

function scaleOpts(log, x = false) {
  if (log) return { distr: 3, log: 10, range: logRange };
  return { range: x ? xRange : linRange };
}

class Plot {
  // The plot takes a box of its own at the end of `parent`, so it stays where it was placed
  // even though uPlot only draws it at the first snapshot.
  constructor(parent) {
    const el = parent.appendChild(document.createElement('div'));
    el.className = 'plot';
    el.title = 'drag to zoom in, double-click to zoom out';
    this.el = el;
    this.u = null;
    this.key = '';
    this.zoom = null; // [min, max] of x chosen by the user, kept across snapshots
    new ResizeObserver(() => {
      if (this.u) this.u.setSize(this.size());
    }).observe(el);
  }

  size() {
    return { width: Math.max(240, this.el.clientWidth), height: PLOT_HEIGHT };
  }

  // spec: {key, xLabel, yLabel, logX, logY, series: [{label, scale}], y2: {label, log}}.
  // The plot is rebuilt only when spec.key changes; otherwise only its data are replaced.
  show(spec, data) {
    if (this.u && spec.key === this.key) {
      if (this.zoom) {
        // Keep the user's x range; setting it ranges y to the data inside it.
        this.u.setData(data, false);
        this.u.setScale('x', { min: this.zoom[0], max: this.zoom[1] });
      } else {
        this.u.setData(data);
      }
      return;
    }
    if (this.u) this.u.destroy();
    this.key = spec.key;
    this.zoom = null;
    this.u = new uPlot(this.options(spec), data, this.el);
    // uPlot's own double-click handler zooms out; this one forgets the zoom.
    this.u.over.addEventListener('dblclick', () => {
      this.zoom = null;
    });
  }

  options(spec) {
    const axis = (label, extra) => ({ label, values: (u, splits) => splits.map(fmtTick),
      size: 60, ...extra });
    const scales = { x: { time: false, ...scaleOpts(spec.logX, true) }, y: scaleOpts(spec.logY) };
    const axes = [axis(spec.xLabel, { size: 44 }), axis(spec.yLabel)];
    if (spec.y2) {
      scales.y2 = scaleOpts(spec.y2.log);
      axes.push(axis(spec.y2.label, { scale: 'y2', side: 1, grid: { show: false } }));
    }
    const few = (spec.points ?? 0) < 60;
    return {
      ...this.size(),
      scales,
      axes,
      series: [
        { label: spec.xLabel, value: (u, v) => (v == null ? '–' : fmtTick(v)) },
        ...spec.series.map((s, i) => ({
          label: s.label,
          scale: s.scale || 'y',
          stroke: COLORS[i % COLORS.length],
          width: 1.5,
          points: { show: few },
          value: (u, v) => (v == null ? '–' : fmtTick(v)),
        })),
      ],
      cursor: { drag: { x: true, y: false } },
      hooks: {
        // A drag selects an x range, which uPlot zooms to; remember it for the next snapshots.
        setSelect: [(u) => {
          if (u.select.width > 0) {
            this.zoom = [u.posToVal(u.select.left, 'x'), u.posToVal(u.select.left + u.select.width, 'x')];
          }
        }],
      },
    };
  }
}

// ---------------------------------------------------------------------------------------------
// Small DOM helpers.

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else e.setAttribute(k, v);
  }
  e.append(...children);
  return e;
}

// A checkbox or select in a panel's options row; onChange re-renders the last snapshot.
function checkbox(panel, label, onChange) {
  const input = el('input', { type: 'checkbox' });
  input.addEventListener('change', () => {
    onChange(input.checked);
    panel.rerender();
  });
  panel.options.append(el('label', {}, input, ` ${label}`));
  return input;
}

function select(panel, label, choices, onChange) {
  const s = el('select');
  for (const [value, text] of choices) s.append(el('option', { value, text }));
  s.addEventListener('change', () => {
    onChange(s.value);
    panel.rerender();
  });
  panel.options.append(el('label', {}, `${label} `, s));
  return s;
}

// Fills a <tbody> with one row per [key, value], reusing the rows already there.
function fillTable(tbody, entries) {
  while (tbody.rows.length > entries.length) tbody.deleteRow(-1);
  entries.forEach(([k, v], i) => {
    const row = tbody.rows[i] || tbody.insertRow();
    while (row.cells.length < 2) row.insertCell();
    row.cells[0].textContent = k;
    row.cells[1].textContent = v;
  });
}

function channelLabels(panel, n, key = 'channels') {
  const channels = panel.parameters[key];
  return Array.from({ length: n }, (_, i) =>
    (Array.isArray(channels) && channels[i] !== undefined ? `ch ${channels[i]}` : `row ${i}`));
}

// ---------------------------------------------------------------------------------------------
// Panel bodies by kind. setup(panel) builds the options and body once; update(panel, m) shows a
// snapshot entry and returns whether it holds data (see data-has-data).

const KINDS = {
  Counter: {
    setup(p) {
      p.state.normalized = false;
      checkbox(p, 'rate (Hz)', (v) => { p.state.normalized = v; });
      p.plot = new Plot(p.body);
    },
    update(p, m) {
      const norm = p.state.normalized;
      const ys = rows(m.arrays[norm ? 'data_normalized' : 'data']).map((r) => r.map((v) => yVal(v)));
      const xs = (m.arrays.index?.data ?? []).map((v) => v * 1e-12);
      const labels = channelLabels(p, ys.length);
      p.plot.show({
        key: `${ys.length}|${norm}`,
        xLabel: 'time (s)',
        yLabel: norm ? 'rate (Hz)' : 'counts per bin',
        series: labels.map((label) => ({ label })),
        points: xs.length,
      }, table(xs, ys, false));
      return hasNonZero(ys);
    },
  },

  Countrate: {
    setup(p) {
      p.tbody = el('tbody');
      p.body.append(el('table', { class: 'rates' },
        el('thead', {}, el('tr', {}, el('th', { text: 'channel' }), el('th', { text: 'rate' }),
          el('th', { text: 'counts' }))), p.tbody));
    },
    update(p, m) {
      const rates = m.arrays.data?.data ?? [];
      const totals = m.arrays.counts_total?.data ?? [];
      const labels = channelLabels(p, Math.max(rates.length, totals.length));
      while (p.tbody.rows.length > labels.length) p.tbody.deleteRow(-1);
      labels.forEach((label, i) => {
        const row = p.tbody.rows[i] || p.tbody.insertRow();
        while (row.cells.length < 3) row.insertCell();
        row.cells[0].textContent = label;
        row.cells[1].textContent = fmtSI(rates[i], 'Hz', 4);
        row.cells[1].className = 'big';
        row.cells[2].textContent = fmtInt(totals[i]);
      });
      return true;
    },
  },

  Correlation: {
    setup(p) {
      p.state.g2 = false;
      p.state.log = false;
      select(p, 'show', [['counts', 'counts'], ['g2', 'g2 (normalized)']],
        (v) => { p.state.g2 = v === 'g2'; });
      checkbox(p, 'log y', (v) => { p.state.log = v; });
      p.plot = new Plot(p.body);
    },
    update(p, m) {
      const { g2, log } = p.state;
      const ys = [(m.arrays[g2 ? 'data_normalized' : 'data']?.data ?? []).map((v) => yVal(v, log))];
      const ps = m.arrays.index?.data ?? [];
      const t = timeUnit(maxAbs(ps) * 1e-12);
      const xs = ps.map((v) => v * 1e-12 / t.f);
      p.plot.show({
        key: `${g2}|${log}|${t.u}`,
        xLabel: `tau (${t.u})`,
        yLabel: g2 ? 'g2' : 'counts',
        logY: log,
        series: [{ label: g2 ? 'g2' : 'counts' }],
        points: xs.length,
      }, table(xs, ys, false));
      return hasNonZero(ys);
    },
  },

  HistogramLogBins: {
    setup(p) {
      p.state.y = 'g2';
      p.state.log = false;
      select(p, 'show', [['g2', 'g2'], ['data', 'counts'],
        ['data_normalized_counts_per_ps', 'counts per ps']], (v) => { p.state.y = v; });
      checkbox(p, 'log y', (v) => { p.state.log = v; });
      p.plot = new Plot(p.body);
    },
    update(p, m) {
      const { y, log } = p.state;
      const edges = m.arrays.bin_edges?.data ?? [];
      // Bin centres on a log axis: the geometric mean of the two edges, in seconds.
      const xs = edges.slice(1).map((e, i) => Math.sqrt(edges[i] * e) * 1e-12);
      const ys = [(m.arrays[y]?.data ?? []).map((v) => yVal(v, log))];
      const label = { g2: 'g2', data: 'counts', data_normalized_counts_per_ps: 'counts per ps' }[y];
      p.plot.show({
        key: `${y}|${log}`,
        xLabel: 'tau (s)',
        yLabel: label,
        logX: true,
        logY: log,
        series: [{ label }],
        points: xs.length,
      }, table(xs, ys, true));
      return hasNonZero(ys);
    },
  },

  FrequencyStability: {
    setup(p) {
      p.plot = new Plot(p.body);
    },
    update(p, m) {
      const get = (name) => (m.arrays[name]?.data ?? []).map((v) => yVal(v, true));
      // The deviations are dimensionless; TDEV is a time, so it gets its own (right) axis.
      const ys = [get('adev'), get('mdev'), get('hdev'), get('tdev')];
      p.plot.show({
        key: 'fs',
        xLabel: 'tau (s)',
        yLabel: 'ADEV, MDEV, HDEV',
        logX: true,
        logY: true,
        y2: { label: 'TDEV (s)', log: true },
        series: [{ label: 'ADEV' }, { label: 'MDEV' }, { label: 'HDEV' }, { label: 'TDEV', scale: 'y2' }],
        points: (m.arrays.tau?.data ?? []).length,
      }, table(m.arrays.tau?.data ?? [], ys, true));
      return hasNonZero(ys);
    },
  },

  PhaseNoise: {
    setup(p) {
      p.plot = new Plot(p.body);
      p.tbody = el('tbody');
      p.body.append(el('table', { class: 'carriers' },
        el('thead', {}, el('tr', {}, el('th', { text: 'channel' }), el('th', { text: 'carrier' }),
          el('th', { text: 'integrated jitter' }))), p.tbody));
    },
    update(p, m) {
      const offsets = rows(m.arrays.offset);
      const noise = rows(m.arrays.phase_noise);
      const labels = channelLabels(p, Math.max(offsets.length, noise.length));
      // Every channel has offsets of its own: join them on one x axis. uPlot.join fills the
      // points a channel lacks with undefined, which its lines pass over (null would break them).
      const tables = labels.map((_, i) =>
        table(offsets[i] ?? [], [(noise[i] ?? []).map((v) => yVal(v))], true));
      const data = tables.length > 1 ? uPlot.join(tables) : (tables[0] ?? [[]]);
      p.plot.show({
        key: `${labels.length}`,
        xLabel: 'offset (Hz)',
        yLabel: 'L(f) (dBc/Hz)',
        logX: true,
        series: labels.map((label) => ({ label })),
        points: data[0].length,
      }, data);
      const freq = m.arrays.frequency?.data ?? [];
      const jitter = m.arrays.integrated_jitter?.data ?? [];
      fillTable(p.tbody, labels.map((label, i) => [label, fmtSI(freq[i], 'Hz', 10)]));
      labels.forEach((_, i) => {
        const row = p.tbody.rows[i];
        if (row.cells.length < 3) row.insertCell();
        row.cells[2].textContent = fmtSI(jitter[i], 's');
      });
      return hasNonZero(tables.map((t) => t[1] ?? []));
    },
  },
};

// Kinds without a plot (FileWriter, TagStream, ...): their facts are the body.
const FACTS_ONLY = {
  setup(p) {
    p.tbody = el('tbody');
    p.body.append(el('table', { class: 'facts' }, p.tbody));
  },
  update(p, m) {
    fillTable(p.tbody, Object.entries(m.facts ?? {}).map(([k, v]) => [k, fmtValue(v)]));
    return true;
  },
};

// ---------------------------------------------------------------------------------------------
// Measurement panels.

const panels = new Map();

class Panel {
  constructor(info) {
    this.name = info.name;
    this.kind = info.kind;
    this.parameters = info.parameters ?? {};
    this.units = info.parameter_units ?? {};
    this.impl = KINDS[info.kind] ?? FACTS_ONLY;
    this.state = {};
    this.updates = 0;
    this.last = null;

    const root = document.getElementById('panel-template').content.firstElementChild.cloneNode(true);
    this.el = root;
    root.dataset.name = this.name;
    root.dataset.kind = this.kind;
    root.querySelector('.name').textContent = this.name;
    root.querySelector('.kind').textContent = this.kind;
    root.querySelector('.name').title = Object.entries(this.parameters)
      .map(([k, v]) => `${k} = ${fmtValue(v)}${this.units[k] ? ` ${this.units[k]}` : ''}`).join('\n');
    this.badge = root.querySelector('.badge');
    this.capture = root.querySelector('.capture');
    this.overflows = root.querySelector('.overflows');
    this.error = root.querySelector('.control-error');
    this.options = root.querySelector('.options');
    this.body = root.querySelector('.body');
    this.factsBox = root.querySelector('.facts-details');
    this.facts = this.factsBox.querySelector('tbody');
    this.duration = root.querySelector('.duration');

    for (const button of root.querySelectorAll('button[data-action]')) {
      button.addEventListener('click', () => this.control(button.dataset.action));
    }
    document.getElementById('measurements').append(root);
    this.impl.setup(this);
  }

  control(action) {
    const body = { action, measurement: this.name };
    if (action === 'start_for') {
      const seconds = Number(this.duration.value);
      if (!(seconds > 0)) {
        showError(this.error, 'Start for: enter a duration in seconds, above 0');
        return;
      }
      body.duration_ps = Math.round(seconds * 1e12);
    }
    post(body, this.error);
  }

  update(m) {
    this.last = m;
    this.updates += 1;
    this.el.dataset.updates = String(this.updates);
    this.el.dataset.capturePs = String(m.capture_duration_ps);
    this.el.dataset.running = String(Boolean(m.running));
    this.badge.textContent = m.running ? 'running' : 'stopped';
    this.badge.className = `badge ${m.running ? 'running' : 'stopped'}`;
    this.capture.textContent = fmtSeconds(m.capture_duration_ps);
    this.overflows.textContent = fmtInt(m.overflow_count);
    this.render();
  }

  render() {
    const m = this.last;
    const hasData = this.impl.update(this, { ...m, arrays: m.arrays ?? {} });
    // Sticky: the panel has shown data once (a Clear does not take that back).
    if (hasData) this.el.dataset.hasData = 'true';
    if (this.impl !== FACTS_ONLY) {
      const facts = Object.entries(m.facts ?? {});
      this.factsBox.hidden = facts.length === 0;
      fillTable(this.facts, facts.map(([k, v]) => [k, fmtValue(v)]));
    }
  }

  // A toggle changed: show the last snapshot again in the new way.
  rerender() {
    if (this.last) this.render();
  }
}

// ---------------------------------------------------------------------------------------------
// Controls.

function showError(box, text) {
  box.textContent = text;
  box.hidden = !text;
}

async function post(body, errorBox) {
  showError(errorBox, '');
  try {
    const r = await fetch(apiUrl('api/control'), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    let answer = {};
    try {
      answer = await r.json();
    } catch {
      // Not JSON: the status line says enough.
    }
    if (!r.ok || answer.ok === false) throw new Error(answer.error || `${r.status} ${r.statusText}`);
    return true;
  } catch (e) {
    showError(errorBox, `${body.action}: ${e.message}`);
    return false;
  }
}

// ---------------------------------------------------------------------------------------------
// Profile, source, run state.

const profileEl = document.getElementById('profile');
const bars = new Map();

function field(root, name, text) {
  root.querySelector(`[data-field="${name}"]`).textContent = text;
}

function showProfile(pr) {
  if (!pr) return;
  profileEl.dataset.wallMtagsPerS = String(pr.wall_mtags_per_s ?? 0);
  const rate = pr.wall_mtags_per_s;
  field(profileEl, 'wall_rate', isNum(rate) ? `${rate.toFixed(2)} MTags/s` : '–');
  field(profileEl, 'tags', fmtInt(pr.tags));
  field(profileEl, 'stream_time', fmtSeconds(pr.stream_time_ps));
  field(profileEl, 'wall_time', isNum(pr.wall_s) ? `${pr.wall_s.toFixed(1)} s` : '–');
  field(profileEl, 'in_flight', `${pr.blocks_in_flight ?? '–'} / ${pr.max_blocks_in_flight ?? '–'}`);
  field(profileEl, 'threads', fmtInt(pr.threads));

  // One bar per node, the source first. Capacities span decades (a Countrate is a thousand
  // times faster than a PhaseNoise), so the bars are on a log scale of whole decades, with a
  // line at the wall rate: a node whose bar ends near the line is what holds the graph back.
  // The slowest node is marked.
  const nodes = [...(pr.nodes ?? [])].sort((a, b) => (b.kind === 'source') - (a.kind === 'source'));
  const caps = nodes.map((n) => n.capacity_mtags_per_s).filter((c) => isNum(c) && c > 0);
  const wall = isNum(pr.wall_mtags_per_s) && pr.wall_mtags_per_s > 0 ? pr.wall_mtags_per_s : null;
  const slowest = Math.min(...caps);
  const lo = Math.floor(Math.log10(Math.min(slowest, wall ?? Infinity, 1e9)));
  const hi = Math.max(lo + 1, Math.ceil(Math.log10(Math.max(...caps, 1e-9))));
  const pos = (v) => `${Math.max(0, Math.min(100, (100 * (Math.log10(v) - lo)) / (hi - lo)))}%`;
  profileEl.querySelector('.scale').textContent =
    `log scale, ${fmtTick(10 ** lo)} to ${fmtTick(10 ** hi)} MTags/s; the line marks the wall rate`;
  const box = profileEl.querySelector('.bars');
  nodes.forEach((n, i) => {
    let bar = bars.get(n.name);
    if (!bar) {
      bar = el('div', { class: 'bar' },
        el('span', { class: 'bar-label', text: n.kind === n.name ? n.name : `${n.name} (${n.kind})` }),
        el('span', { class: 'bar-track' },
          el('span', { class: 'bar-fill' }), el('span', { class: 'bar-mark' })),
        el('span', { class: 'bar-value' }));
      bars.set(n.name, bar);
    }
    if (box.children[i] !== bar) box.insertBefore(bar, box.children[i] ?? null);
    const c = n.capacity_mtags_per_s;
    bar.querySelector('.bar-fill').style.width = isNum(c) && c > 0 ? pos(c) : '0%';
    const mark = bar.querySelector('.bar-mark');
    mark.hidden = !wall;
    if (wall) mark.style.left = pos(wall);
    bar.querySelector('.bar-value').textContent = isNum(c) ? `${c.toFixed(1)}` : '–';
    bar.classList.toggle('bottleneck', isNum(c) && c === slowest && caps.length > 1);
    bar.title = `tags ${fmtInt(n.tags)}, blocks ${fmtInt(n.blocks)}, busy ${n.busy_s?.toFixed?.(2)} s, ` +
      `waiting ${n.wait_s?.toFixed?.(2)} s`;
  });
  while (box.children.length > nodes.length) box.lastChild.remove();
}

function showSource(src) {
  if (!src) return;
  const root = document.getElementById('source');
  root.querySelector('.description').textContent = src.description || '–';
  const stats = Object.entries(src.statistics ?? {});
  root.querySelector('.no-statistics').hidden = stats.length > 0;
  fillTable(root.querySelector('tbody'), stats.map(([k, v]) => [k, fmtValue(v)]));
}

// One row per live setting of a virtual channel, built when first seen; the input keeps what
// the user types, the value beside it follows the snapshots.
const settingRows = new Map();

function showChannels(channels) {
  if (!channels) return;
  const root = document.getElementById('channels');
  const errorBox = root.querySelector('.control-error');
  for (const channel of channels) {
    for (const [key, value] of Object.entries(channel.settings ?? {})) {
      const id = `${channel.name}\u0000${key}`;
      let row = settingRows.get(id);
      if (!row) {
        row = document.createElement('tr');
        row.dataset.channel = channel.name;
        row.dataset.key = key;
        const label = document.createElement('th');
        label.textContent = `${channel.name} (${channel.kind} → ${channel.outputs.join(', ')}): ${key}`;
        const now = document.createElement('td');
        now.dataset.field = 'value';
        const input = document.createElement('input');
        input.type = 'number';
        input.step = '1';
        input.value = String(value);
        input.setAttribute('aria-label', `${channel.name} ${key} in ps`);
        const set = document.createElement('button');
        set.type = 'button';
        set.textContent = 'Set';
        set.addEventListener('click', () => {
          // Number('') is 0: an emptied field must not set 0.
          const wanted = input.value.trim() === '' ? NaN : Number(input.value);
          if (!Number.isSafeInteger(wanted)) {
            showError(errorBox, `${channel.name}: ${key} must be a whole number of ps`);
            return;
          }
          post({ action: 'set', channel: channel.name, key, value: wanted }, errorBox);
        });
        const edit = document.createElement('td');
        edit.append(input, ' ps ', set);
        row.append(label, now, edit);
        root.querySelector('tbody').append(row);
        settingRows.set(id, row);
      }
      row.querySelector('[data-field="value"]').textContent = `${fmtInt(value)} ps`;
    }
  }
  root.hidden = settingRows.size === 0;
}

// Set once "Stop run" was acknowledged: the server is writing the results and exits.
let stopRequested = false;

function showRun(run) {
  if (!run) return;
  const state = document.getElementById('run-state');
  state.textContent = stopRequested && run.state === 'running' ? 'stopping' : run.state;
  state.className = `state state-${run.state}`;
  showError(document.getElementById('run-error'), run.error || '');
}

// ---------------------------------------------------------------------------------------------
// Snapshots. Messages are shown at the next animation frame; if several arrive in between
// only the newest is drawn, so a slow machine falls behind by at most one frame.

let pending = null;
let scheduled = false;
const arrivals = [];

function onSnapshot(snap) {
  if (!snap || snap.type !== 'snapshot') return;
  pending = snap;
  const now = performance.now();
  arrivals.push(now);
  while (arrivals[0] < now - 2000) arrivals.shift();
  if (scheduled) return;
  scheduled = true;
  // Hidden tabs get no animation frames; there the snapshot is applied at once.
  const apply = () => {
    scheduled = false;
    const s = pending;
    pending = null;
    if (s) applySnapshot(s);
  };
  if (document.hidden) setTimeout(apply, 0);
  else requestAnimationFrame(apply);
}

function applySnapshot(snap) {
  showRun(snap.run);
  showProfile(snap.profile);
  showSource(snap.source);
  showChannels(snap.channels);
  for (const m of snap.measurements ?? []) {
    let panel = panels.get(m.name);
    if (!panel) {
      panel = new Panel({ name: m.name, kind: m.kind });
      panels.set(m.name, panel);
    }
    try {
      panel.update(m);
    } catch (e) {
      // One panel's trouble must not stop the others.
      console.error(`panel ${m.name}:`, e);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Connection: the graph once, then the WebSocket, reopened with back-off when it closes.

const connection = document.getElementById('connection');
let attempts = 0;

function backoff() {
  const delay = Math.min(10000, 500 * 2 ** attempts);
  attempts += 1;
  return delay;
}

function connect() {
  const ws = new WebSocket(wsUrl());
  ws.onopen = () => {
    attempts = 0;
    connection.textContent = 'live';
    document.body.classList.remove('stale');
  };
  ws.onmessage = (event) => {
    try {
      onSnapshot(JSON.parse(event.data));
    } catch (e) {
      console.error('bad message:', e);
    }
  };
  ws.onclose = () => {
    // What is shown stays, greyed: it is the last the server sent.
    document.body.classList.add('stale');
    if (stopRequested) {
      // The server exits after "Stop run": there is nothing to reconnect to.
      document.getElementById('run-state').textContent = 'ended';
      connection.textContent = 'the server has ended the run and written the results';
      return;
    }
    const delay = backoff();
    connection.textContent = `disconnected, retrying in ${(delay / 1000).toFixed(1)} s`;
    setTimeout(connect, delay);
  };
}

// The measured message rate, next to the connection state.
setInterval(() => {
  if (!connection.textContent.startsWith('live')) return;
  const now = performance.now();
  const n = arrivals.filter((t) => t > now - 1000).length;
  connection.textContent = `live · ${n} updates/s`;
}, 1000);

async function start() {
  const pageError = document.getElementById('page-error');
  let graph;
  try {
    const r = await fetch(apiUrl('api/graph'));
    if (!r.ok) throw new Error(`${r.status} ${r.statusText}: ${(await r.text()).slice(0, 200)}`);
    graph = await r.json();
  } catch (e) {
    const delay = backoff();
    showError(pageError, `Cannot read the graph (${e.message}); retrying in ${(delay / 1000).toFixed(1)} s`);
    setTimeout(start, delay);
    return;
  }
  showError(pageError, '');
  attempts = 0;
  document.getElementById('version').textContent = graph.version ? `v${graph.version}` : '';
  if (graph.source) {
    document.querySelector('#source .description').textContent =
      typeof graph.source === 'string' ? graph.source : fmtValue(graph.source);
  }
  for (const info of graph.measurements ?? []) {
    if (!panels.has(info.name)) panels.set(info.name, new Panel(info));
  }
  connect();
}

document.getElementById('download').href = apiUrl('api/results.h5');
document.getElementById('stop-run').addEventListener('click', async (event) => {
  const button = event.currentTarget;
  button.disabled = true;
  // Set before the answer: the server may close the WebSocket before its answer arrives.
  stopRequested = true;
  if (await post({ action: 'stop_run' }, document.getElementById('page-error'))) {
    button.textContent = 'Stopping…';
    // Unless the connection has already closed on the ended run.
    if (!document.body.classList.contains('stale')) {
      document.getElementById('run-state').textContent = 'stopping';
    }
  } else {
    stopRequested = false;
    button.disabled = false;
    if (document.body.classList.contains('stale')) connect();
  }
});

start();
