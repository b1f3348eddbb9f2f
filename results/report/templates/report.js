'use strict';
const COLORS = ['#2f9e5b', '#d64545', '#e0a000'];
const OUTCOME = ['ok', 'fail', 'info'];
const BAND_COLORS = {partition: '#4c78c8', kill: '#c0392b', pause: '#8e5bb5', clock: '#d98c00', packet: '#16a085'};
const QCOLORS = ['#2f6fd6', '#8e5bb5', '#d64545', '#555'];
const M = {l: 64, r: 12, t: 20, b: 24};
let D, C, N, view, full, highlighted = -1, pinned = -1, laneRows = null, rowOfIndex = null;
const plots = [];

function bandColor(kind) { return BAND_COLORS[kind] || BAND_COLORS[String(kind).split('-')[0]] || '#7f8c8d'; }
function esc(s) { return String(s).replace(/[&<>"]/g, c => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;'}[c])); }
function fmtMs(ms) {
  if (Math.abs(ms) >= 60000) return (ms / 60000).toFixed(2) + ' min';
  if (Math.abs(ms) >= 1000) return (ms / 1000).toFixed(3) + ' s';
  return ms.toFixed(ms < 10 ? 3 : 1) + ' ms';
}
// Times on the run's clock (ms since its first op) read in seconds; ``step`` (ms) sets
// the decimals, so a zoomed-in axis still tells its ticks apart.
function fmtS(ms, step) {
  const d = step === undefined ? 3 : Math.max(0, Math.min(6, Math.ceil(-Math.log10(step / 1000) - 1e-9)));
  return (ms / 1000).toFixed(d) + ' s';
}
function el(tag, attrs, html) {
  const e = document.createElement(tag);
  for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
  if (html !== undefined) e.innerHTML = html;
  return e;
}

async function decode() {
  const bin = atob(D.columns);
  const u8 = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) u8[i] = bin.charCodeAt(i);
  const stream = new Blob([u8]).stream().pipeThrough(new DecompressionStream('gzip'));
  const buf = await new Response(stream).arrayBuffer();
  const T = {f64: Float64Array, f32: Float32Array, i32: Int32Array, u16: Uint16Array, u8: Uint8Array};
  const cols = {};
  for (const [name, kind, off, n] of D.layout) cols[name] = new T[kind](buf, off, n);
  return cols;
}

function buildIndexes() {
  laneRows = Array.from({length: Math.max(D.lanes, 1)}, () => []);
  for (let i = 0; i < N; i++) laneRows[C.lane[i]].push(i);
  laneRows = laneRows.map(a => Int32Array.from(a));
  rowOfIndex = new Map();
  for (let i = 0; i < N; i++) rowOfIndex.set(C.index[i], i);
}

// ---- axes -----------------------------------------------------------------------
function niceStep(span, target) {
  const raw = span / Math.max(target, 1), p = Math.pow(10, Math.floor(Math.log10(raw)));
  for (const m of [1, 2, 5, 10]) if (raw <= m * p) return m * p;
  return 10 * p;
}
function xOf(p, t) { return M.l + (t - view[0]) / (view[1] - view[0]) * (p.w - M.l - M.r); }
function tOf(p, x) { return view[0] + (x - M.l) / (p.w - M.l - M.r) * (view[1] - view[0]); }
function xAxis(p, ctx) {
  const step = niceStep(view[1] - view[0], Math.max(2, (p.w - M.l) / 110));
  ctx.fillStyle = '#5d6675'; ctx.strokeStyle = '#eceef2'; ctx.font = '11px system-ui,sans-serif';
  ctx.textAlign = 'center';
  for (let t = Math.ceil(view[0] / step) * step; t <= view[1]; t += step) {
    const x = xOf(p, t);
    ctx.beginPath(); ctx.moveTo(x, M.t); ctx.lineTo(x, p.h - M.b); ctx.stroke();
    ctx.fillText(fmtS(Math.abs(t) < step / 1e6 ? 0 : t, step), x, p.h - 8);
  }
}
function bandsBg(p, ctx, withLabels) {
  for (const b of D.bands) {
    const x0 = xOf(p, b.start), x1 = Math.max(xOf(p, b.stop), x0 + 2);
    if (x1 < M.l || x0 > p.w - M.r) continue;
    const c0 = Math.max(x0, M.l), c1 = Math.min(x1, p.w - M.r);
    ctx.fillStyle = bandColor(b.kind) + '22'; ctx.fillRect(c0, M.t, c1 - c0, p.h - M.t - M.b);
    ctx.fillStyle = bandColor(b.kind); ctx.fillRect(c0, M.t - 4, c1 - c0, 3);
    if (withLabels && c1 - c0 > 30) {
      ctx.save(); ctx.beginPath(); ctx.rect(c0, 0, c1 - c0, M.t); ctx.clip();
      ctx.font = '10px system-ui,sans-serif'; ctx.textAlign = 'left';
      ctx.fillText(b.label, c0 + 2, M.t - 7); ctx.restore();
    }
  }
}
function setup(p) {
  const dpr = window.devicePixelRatio || 1, w = p.canvas.parentElement.clientWidth;
  p.w = w; p.canvas.style.height = p.h + 'px';
  if (p.canvas.width !== Math.round(w * dpr) || p.canvas.height !== Math.round(p.h * dpr)) {
    p.canvas.width = Math.round(w * dpr); p.canvas.height = Math.round(p.h * dpr);
  }
  const ctx = p.canvas.getContext('2d');
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0); ctx.clearRect(0, 0, w, p.h);
  return ctx;
}
function clipPlot(p, ctx) { ctx.save(); ctx.beginPath(); ctx.rect(M.l, M.t - 6, p.w - M.l - M.r, p.h - M.t - M.b + 6); ctx.clip(); }

// ---- visible rows (sorted by start; no op is longer than maxLat) --------------------
let maxLat = 0;
function lowerBound(arr, t) { let lo = 0, hi = arr.length; while (lo < hi) { const m = (lo + hi) >> 1; if (arr[m] < t) lo = m + 1; else hi = m; } return lo; }
function visibleRange() {
  const a = lowerBound(C.start, view[0] - maxLat), b = lowerBound(C.start, view[1] + 1e-9);
  return [a, b];
}

// ---- timeline -------------------------------------------------------------------
function timelinePlot() {
  const canvas = document.getElementById('tl');
  const rowH = Math.max(2, Math.min(16, Math.floor(520 / Math.max(D.lanes, 1))));
  const p = {canvas, rowH, top: M.t + 4, h: M.t + 4 + Math.max(D.lanes, 1) * rowH + M.b};
  p.draw = function () {
    const ctx = setup(p); bandsBg(p, ctx, true); xAxis(p, ctx);
    ctx.fillStyle = '#5d6675'; ctx.font = '10px system-ui,sans-serif'; ctx.textAlign = 'right';
    const every = Math.ceil(12 / p.rowH);
    for (let l = 0; l < D.lanes; l += every) ctx.fillText('w' + l, M.l - 6, p.top + l * p.rowH + p.rowH - 2);
    clipPlot(p, ctx);
    const [a, b] = visibleRange(), scale = (p.w - M.l - M.r) / (view[1] - view[0]);
    const hgt = Math.max(1, p.rowH - (p.rowH > 4 ? 2 : 0));
    if ((b - a) / Math.max(D.lanes, 1) > (p.w - M.l - M.r) / 2) densityBars(p, ctx, a, b, scale, hgt);
    else for (let ty = 0; ty < 3; ty++) {
      ctx.fillStyle = COLORS[ty];
      for (let i = a; i < b; i++) {
        if (C.type[i] !== ty) continue;
        const x0 = M.l + (C.start[i] - view[0]) * scale, wd = Math.max(1, C.lat[i] * scale);
        if (x0 + wd < M.l) continue;
        ctx.fillRect(x0, p.top + C.lane[i] * p.rowH, wd, hgt);
      }
    }
    for (const r of [highlighted, pinned]) {
      if (r < 0) continue;
      const x0 = xOf(p, C.start[r]), x1 = Math.max(xOf(p, C.start[r] + C.lat[r]), x0 + 2), y = p.top + C.lane[r] * p.rowH;
      ctx.strokeStyle = '#1d2330'; ctx.lineWidth = 2;
      ctx.strokeRect(x0 - 2, y - 2, x1 - x0 + 4, hgt + 4);
      ctx.strokeStyle = '#1d233066'; ctx.lineWidth = 1;
      ctx.beginPath(); ctx.moveTo(x0, M.t); ctx.lineTo(x0, p.h - M.b); ctx.stroke();
    }
    ctx.restore();
  };
  p.hit = function (x, y) {
    const lane = Math.floor((y - p.top) / p.rowH);
    if (lane < 0 || lane >= D.lanes) return -1;
    const rows = laneRows[lane], t = tOf(p, x), tol = 3 * (view[1] - view[0]) / (p.w - M.l - M.r);
    let lo = 0, hi = rows.length;
    while (lo < hi) { const m = (lo + hi) >> 1; if (C.start[rows[m]] <= t + tol) lo = m + 1; else hi = m; }
    for (let k = lo - 1; k >= 0 && k >= lo - 4; k--) {
      const r = rows[k];
      if (C.start[r] - tol <= t && C.start[r] + C.lat[r] + tol >= t) return r;
    }
    return -1;
  };
  return p;
}

// Zoomed out, several ops share a pixel: drawing them one over another would paint
// every pixel with a failure red. Instead each pixel column of a row shows the share
// of ok/fail/info op-time in it (weighted back to all ops when the timeline is
// sampled), stacked ok-fail-info; a non-zero share gets at least one pixel.
function densityBars(p, ctx, a, b, scale, hgt) {
  const cols = Math.ceil(p.w - M.l - M.r), lanes = Math.max(D.lanes, 1);
  if (!(cols > 0)) return;  // not laid out (yet)
  const acc = new Float64Array(lanes * cols * 3), w = D.type_weights;
  for (let i = a; i < b; i++) {
    const x0 = (C.start[i] - view[0]) * scale, x1 = x0 + C.lat[i] * scale;
    if (x1 < 0 || x0 >= cols) continue;
    const c0 = Math.max(0, Math.floor(x0)), c1 = Math.min(cols - 1, Math.floor(x1));
    const base = C.lane[i] * cols, ty = C.type[i], wt = w[ty];
    if (c0 === c1) { acc[(base + c0) * 3 + ty] += (x1 - x0) * wt; continue; }
    acc[(base + c0) * 3 + ty] += (c0 + 1 - x0) * wt;
    for (let c = c0 + 1; c < c1; c++) acc[(base + c) * 3 + ty] += wt;
    acc[(base + c1) * 3 + ty] += (x1 - c1) * wt;
  }
  for (let l = 0; l < lanes; l++) {
    const y = p.top + l * p.rowH;
    for (let c = 0; c < cols; c++) {
      const k = (l * cols + c) * 3, tot = acc[k] + acc[k + 1] + acc[k + 2];
      if (tot <= 0) continue;
      let yy = y + hgt;
      for (let ty = 0; ty < 3; ty++) {
        if (acc[k + ty] <= 0) continue;
        const h = Math.max(1, hgt * acc[k + ty] / tot);
        ctx.fillStyle = COLORS[ty]; ctx.fillRect(M.l + c, yy - h, 1, h); yy -= h;
      }
    }
  }
}

// ---- latency scatter --------------------------------------------------------------
function logAxis(p, ctx, lo, hi, unit) {
  const y = v => p.h - M.b - (Math.log10(v) - lo) / (hi - lo) * (p.h - M.t - M.b);
  ctx.fillStyle = '#5d6675'; ctx.strokeStyle = '#eceef2'; ctx.textAlign = 'right'; ctx.font = '11px system-ui,sans-serif';
  for (let e = Math.ceil(lo); e <= hi; e++) {
    const yy = y(Math.pow(10, e));
    ctx.beginPath(); ctx.moveTo(M.l, yy); ctx.lineTo(p.w - M.r, yy); ctx.stroke();
    ctx.fillText(fmtMs(Math.pow(10, e)).replace('.000', '').replace('.0 ', ' '), M.l - 6, yy + 4);
  }
  return y;
}
function latRange() {
  let lo = Infinity, hi = 0;
  for (let i = 0; i < N; i++) { const v = C.lat[i]; if (v > 0 && v < lo) lo = v; if (v > hi) hi = v; }
  if (!isFinite(lo)) { lo = 0.1; hi = 1; }
  return [Math.floor(Math.log10(lo)), Math.ceil(Math.log10(Math.max(hi, lo * 10)))];
}
let LAT;
function latencyPlot() {
  const p = {canvas: document.getElementById('lat'), h: 300};
  p.draw = function () {
    const ctx = setup(p); bandsBg(p, ctx, false); xAxis(p, ctx);
    const y = logAxis(p, ctx, LAT[0], LAT[1]);
    clipPlot(p, ctx);
    const [a, b] = visibleRange(), scale = (p.w - M.l - M.r) / (view[1] - view[0]);
    for (const ty of [0, 1, 2]) {
      ctx.fillStyle = COLORS[ty] + (ty === 0 ? '99' : 'dd');
      for (let i = a; i < b; i++) {
        if (C.type[i] !== ty) continue;
        ctx.fillRect(M.l + (C.start[i] - view[0]) * scale - 1, y(Math.max(C.lat[i], 1e-3)) - 1, 2.2, 2.2);
      }
    }
    if (highlighted >= 0) {
      ctx.strokeStyle = '#1d2330'; ctx.lineWidth = 2; ctx.beginPath();
      ctx.arc(xOf(p, C.start[highlighted]), y(Math.max(C.lat[highlighted], 1e-3)), 6, 0, 7); ctx.stroke();
    }
    ctx.restore();
  };
  p.hit = function (x, yy) {
    const [a, b] = visibleRange(); let best = -1, bd = 36;
    const y = v => p.h - M.b - (Math.log10(v) - LAT[0]) / (LAT[1] - LAT[0]) * (p.h - M.t - M.b);
    const t = tOf(p, x), span = 6 * (view[1] - view[0]) / (p.w - M.l - M.r);
    for (let i = Math.max(a, lowerBound(C.start, t - span)); i < b && C.start[i] <= t + span; i++) {
      const dx = xOf(p, C.start[i]) - x, dy = y(Math.max(C.lat[i], 1e-3)) - yy, d = dx * dx + dy * dy;
      if (d < bd) { bd = d; best = i; }
    }
    return best;
  };
  return p;
}

function seriesPlot(id, h, xs, series, colors, names, log) {
  const p = {canvas: document.getElementById(id), h};
  let lo = Infinity, hi = -Infinity;
  for (const s of series) for (const v of s) if (v !== null && (!log || v > 0)) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
  if (!isFinite(lo)) { lo = log ? 0.1 : 0; hi = 1; }
  const range = log ? [Math.floor(Math.log10(lo)), Math.ceil(Math.log10(Math.max(hi, lo * 10)))] : [0, hi * 1.08 || 1];
  const half = D.bucket_ms / 2;
  p.draw = function () {
    const ctx = setup(p); bandsBg(p, ctx, false); xAxis(p, ctx);
    let y;
    if (log) y = logAxis(p, ctx, range[0], range[1]);
    else {
      y = v => p.h - M.b - v / range[1] * (p.h - M.t - M.b);
      const step = niceStep(range[1], 5);
      ctx.fillStyle = '#5d6675'; ctx.strokeStyle = '#eceef2'; ctx.textAlign = 'right'; ctx.font = '11px system-ui,sans-serif';
      for (let v = 0; v <= range[1]; v += step) {
        ctx.beginPath(); ctx.moveTo(M.l, y(v)); ctx.lineTo(p.w - M.r, y(v)); ctx.stroke();
        ctx.fillText(v >= 1000 ? (v / 1000) + 'k' : String(v), M.l - 6, y(v) + 4);
      }
    }
    clipPlot(p, ctx);
    series.forEach((s, k) => {
      ctx.strokeStyle = colors[k]; ctx.lineWidth = 1.6; ctx.beginPath(); let pen = false;
      for (let i = 0; i < xs.length; i++) {
        const v = s[i];
        if (v === null || (log && v <= 0)) { pen = false; continue; }
        const x = xOf(p, xs[i] + half), yy = log ? y(v) : y(v);
        if (pen) ctx.lineTo(x, yy); else { ctx.moveTo(x, yy); pen = true; }
      }
      ctx.stroke();
    });
    ctx.restore();
    ctx.textAlign = 'left'; ctx.font = '11px system-ui,sans-serif';
    let lx = M.l + 8;
    names.forEach((n, k) => { ctx.fillStyle = colors[k]; ctx.fillRect(lx, M.t + 4, 10, 3); ctx.fillStyle = '#333'; ctx.fillText(n, lx + 14, M.t + 9); lx += ctx.measureText(n).width + 30; });
  };
  p.hit = function (x) {
    const t = tOf(p, x) - half; let i = Math.round(t / D.bucket_ms);
    if (i < 0 || i >= xs.length) return null;
    return 't = ' + fmtMs(xs[i]) + ' .. ' + fmtMs(xs[i] + D.bucket_ms) + '\n' + names.map((n, k) => n + ': ' + (series[k][i] === null ? '-' : (log ? fmtMs(series[k][i]) : series[k][i].toFixed(1) + ' ops/s'))).join('\n');
  };
  return p;
}

// ---- hover, pin, jump ---------------------------------------------------------------
function opText(r) {
  const idx = C.index[r], d = D.details[idx];
  let s = 'op ' + idx + '  process ' + C.process[r] + '  ' + D.f_names[C.f[r]] + '  ' + OUTCOME[C.type[r]].toUpperCase() +
    '\ninvoke ' + fmtMs(C.start[r]) + ' -> completion ' + fmtMs(C.start[r] + C.lat[r]) + '  (latency ' + fmtMs(C.lat[r]) + ')';
  if (C.error[r] >= 0) s += '\nerror: ' + D.errors[C.error[r]];
  if (d) {
    s += '\ninvoked: ' + JSON.stringify(d.invoke);
    if (d.value !== null) s += '\nresult:  ' + JSON.stringify(d.value);
  } else if (served()) { s += '\nvalue: loading from the server...'; fetchDetail(idx); }
  else s += '\nvalue: not embedded in this large report (open it through insync serve, or see history.jsonl line ' + idx + ' and its invoke)';
  return s;
}
// Big reports embed values only for ops near anomalies and a sample of fail/info ops;
// opened through `insync serve`, the rest are fetched on demand from /api/op.
function served() { return location.protocol.startsWith('http') && location.pathname.startsWith('/runs/'); }
const loading = new Set();
function fetchDetail(idx) {
  if (loading.has(idx)) return;
  loading.add(idx);
  const run = decodeURIComponent(location.pathname.slice(6).replace(/\/[^/]*$/, ''));
  fetch('/api/op?run=' + encodeURIComponent(run) + '&index=' + idx).then(r => r.ok ? r.json() : Promise.reject(r.status)).then(got => {
    const ops = got[idx] || {}, inv = ops.invoke || {}, done = ops.completion || {};
    D.details[idx] = {invoke: inv.value === undefined ? null : inv.value, value: done.value === undefined ? null : done.value};
    if (pinned >= 0 && C.index[pinned] === idx) pin(pinned);
    const tip = document.getElementById('tip');
    if (tip.style.display === 'block' && tip.textContent.startsWith('op ' + idx + ' ')) tip.textContent = opText(rowOfIndex.get(idx));
  }).catch(err => { D.details[idx] = {invoke: 'could not load: ' + err, value: null}; });
}
function bandText(b) {
  return 'fault ' + b.label + '\n  ' + fmtS(b.start) + ' .. ' + (b.open ? 'end (never stopped)' : fmtS(b.stop)) + '  (nemesis op ' + b.start_index + (b.stop_index !== null ? ' / ' + b.stop_index : '') + ')';
}
// Every fault under the timeline: its label, a click away from the value the nemesis recorded.
function faultList() {
  const box = document.getElementById('faults');
  if (!box || !D.bands.length) return;
  box.innerHTML = '<h3>Faults</h3>' + D.bands.map((b, i) => '<details class="fault" data-band="' + i + '"><summary><i style="background:' + bandColor(b.kind) + '"></i>' + esc(b.label) + ' <span class="muted">' + fmtS(b.start) + ' .. ' + (b.open ? 'end' : fmtS(b.stop)) + '</span></summary><pre>' + esc(b.detail ? JSON.stringify(JSON.parse(b.detail), null, 2) : '(no value recorded)') + '</pre></details>').join('');
}
function pinBand(bs) {
  document.getElementById('detail').textContent = bs.map(b => bandText(b) + '\n' + (b.detail ? JSON.stringify(JSON.parse(b.detail), null, 2) : '(no value recorded)')).join('\n\n');
}
function bandAt(t) { return D.bands.filter(b => b.start <= t && t <= b.stop); }
function showTip(ev, text) {
  const tip = document.getElementById('tip');
  if (!text) { tip.style.display = 'none'; return; }
  tip.textContent = text; tip.style.display = 'block';
  const w = tip.offsetWidth, h = tip.offsetHeight;
  tip.style.left = Math.min(ev.clientX + 14, window.innerWidth - w - 8) + 'px';
  tip.style.top = (ev.clientY + 16 + h > window.innerHeight ? ev.clientY - h - 10 : ev.clientY + 16) + 'px';
}
function pin(r) {
  pinned = r;
  document.getElementById('detail').textContent = r < 0 ? 'Click an op to pin its details here.' : opText(r);
}
function redraw() {
  for (const p of plots) p.draw();
  document.getElementById('range').textContent = fmtS(view[0]) + ' .. ' + fmtS(view[1]);
}
function jumpTo(index) {
  const r = rowOfIndex.get(index);
  if (r === undefined) { document.getElementById('detail').textContent = 'op ' + index + ' is not drawn on the timeline (not a client op).'; return false; }
  const span = Math.max(C.lat[r] * 6, (full[1] - full[0]) / 40, 1);
  const mid = C.start[r] + C.lat[r] / 2;
  view = [mid - span / 2, mid + span / 2];
  highlighted = r; pin(r); redraw();
  document.getElementById('timeline').scrollIntoView({block: 'start'});
  window.insync.jumped = index;
  return true;
}

// Where an op is drawn on the timeline, in viewport pixels (for tests and tooling).
function opBox(index) {
  const r = rowOfIndex.get(index), p = plots[0];
  if (r === undefined) return null;
  const rect = p.canvas.getBoundingClientRect();
  const x0 = xOf(p, C.start[r]), x1 = Math.max(xOf(p, C.start[r] + C.lat[r]), x0 + 1);
  return {x: rect.left + x0, y: rect.top + p.top + C.lane[r] * p.rowH, width: x1 - x0, height: p.rowH};
}

function attach(p) {
  let drag = null;
  p.canvas.addEventListener('mousemove', ev => {
    const rect = p.canvas.getBoundingClientRect(), x = ev.clientX - rect.left, y = ev.clientY - rect.top;
    if (drag) {
      const dt = (drag.x - x) / (p.w - M.l - M.r) * (drag.v[1] - drag.v[0]);
      view = [drag.v[0] + dt, drag.v[1] + dt]; drag.moved = true; redraw(); return;
    }
    const h = p.hit(x, y);
    if (typeof h === 'number') {
      let text = h >= 0 ? opText(h) : '';
      const bs = bandAt(tOf(p, x));
      if (bs.length && (h < 0 || y < M.t)) text = bs.map(bandText).join('\n') + (y < M.t ? '\n(click: pin the fault\'s details)' : '') + (text ? '\n\n' + text : '');
      showTip(ev, text);
    } else showTip(ev, h);
  });
  p.canvas.addEventListener('mouseleave', () => showTip(null, ''));
  p.canvas.addEventListener('mousedown', ev => { drag = {x: ev.clientX - p.canvas.getBoundingClientRect().left, v: view.slice(), moved: false}; });
  window.addEventListener('mouseup', ev => {
    if (drag && !drag.moved && ev.target === p.canvas) {
      const rect = p.canvas.getBoundingClientRect(), x = ev.clientX - rect.left, y = ev.clientY - rect.top;
      const h = p.hit(x, y), bs = bandAt(tOf(p, x));
      if (bs.length && y < M.t) pinBand(bs);
      else if (typeof h === 'number' && h >= 0) { highlighted = h; pin(h); redraw(); }
    }
    drag = null;
  });
  p.canvas.addEventListener('wheel', ev => {
    ev.preventDefault();
    const rect = p.canvas.getBoundingClientRect(), t = tOf(p, ev.clientX - rect.left);
    const k = Math.exp(ev.deltaY * 0.0015);
    view = [t - (t - view[0]) * k, t + (view[1] - t) * k]; redraw();
  }, {passive: false});
  p.canvas.addEventListener('dblclick', () => { view = full.slice(); redraw(); });
}

// ---- static sections ----------------------------------------------------------------
function header() {
  const v = D.verdict, valid = v.valid === true ? 'valid' : v.valid === false ? 'invalid' : 'unknown';
  const t = D.test || {}, w = t.workload || {}, c = t.cluster || {}, n = t.nemesis || {};
  document.getElementById('badge').className = 'badge ' + valid;
  document.getElementById('badge').textContent = valid.toUpperCase();
  const chips = [];
  if (D.cut_short) chips.push(D.cut_short);
  if (t.started) chips.push('started ' + t.started);
  if (c.kafka_version_exact || c.kafka_version) chips.push('Kafka ' + (c.kafka_version_exact || c.kafka_version) + (c.mode ? ' (' + c.mode + ')' : ''));
  if (c.kafka_dist) chips.push('build ' + c.kafka_dist.path + ' (commit ' + (c.kafka_dist.commit_id || 'unknown') + ', sha256 ' + String(c.kafka_dist.sha256 || '').slice(0, 16) + '\u2026)');
  if (w.acks !== undefined) chips.push('acks=' + w.acks);
  if (w.min_insync !== undefined) chips.push('min.insync.replicas=' + w.min_insync);
  if (w.unclean_leader_election !== undefined) chips.push('unclean election ' + (w.unclean_leader_election ? 'ON' : 'off'));
  if (w.txn !== undefined) chips.push('txn ' + (w.txn ? 'on' : 'off'));
  if (n.faults) chips.push('nemesis: ' + (n.faults.length ? n.faults.join(', ') : 'none'));
  if (c.leader_check_s !== undefined) chips.push(c.leader_check_s === null ? 'leader check off' : 'leader check every ' + c.leader_check_s + ' s (planned leader moves)');
  const s = v.stats || {};
  chips.push(D.ops_total.toLocaleString() + ' client ops (' + (s.ok || 0).toLocaleString() + ' ok, ' + (s.fail || 0).toLocaleString() + ' fail, ' + (s.info || 0).toLocaleString() + ' info)');
  chips.push('duration ' + fmtMs(D.duration_ms));
  document.getElementById('chips').innerHTML = chips.map(x => '<span>' + esc(x) + '</span>').join('');
  if (D.ops_drawn < D.ops_total) document.getElementById('sampled').textContent = 'Showing ' + D.ops_drawn.toLocaleString() + ' of ' + D.ops_total.toLocaleString() + ' ops: every op an anomaly points at, fail/info ops, and an even sample of the rest. Quantiles and throughput use all ops.';
  const tbl = document.getElementById('summary-table');
  const types = v['anomaly-types'] || [];
  if (!types.length) tbl.outerHTML = '<p>No anomalies found.' + (v.error ? ' The checker could not decide everything: ' + esc(v.error) : '') + '</p>';
  else {
    tbl.innerHTML = '<tr><th>anomaly</th><th>count</th><th>effect</th><th>first example</th></tr>' + D.anomalies.map(p => {
      const first = p.examples[0] && p.examples[0].ops[0];
      return '<tr><td><a href="#anomaly-' + esc(p.type) + '">' + esc(p.type) + '</a></td><td class="' + (p.bad ? 'count-bad' : '') + '">' + p.count + '</td><td>' + (p.bad ? 'makes the run invalid' : 'informational') + '</td><td>' + (first !== undefined ? '<a class="op" data-op="' + first + '">op ' + first + '</a>' : '') + '</td></tr>';
    }).join('');
    if (v.error) tbl.insertAdjacentHTML('afterend', '<p class="note">Could not decide everything: ' + esc(v.error) + '</p>');
  }
}

function gridHtml(g) {
  const focus = new Set(g.focus), dup = new Set(g.multi_offset_values), never = new Set(g.never_read), conflict = new Set(g.multi_value_offsets);
  let h = '<table><tr><th>offset</th>' + g.ops.map(o => '<th class="op-' + (o.type || 'ok') + '" title="process ' + o.process + ', ' + o.f + ', ' + o.type + '"><a class="op" data-op="' + o.index + '">' + o.index + '</a><br><span class="muted">p' + o.process + ' ' + (o.f || '') + '</span></th>').join('') + '</tr>';
  g.offsets.forEach((off, i) => {
    const prev = i > 0 ? g.offsets[i - 1] : null;
    if (prev !== null && off !== null && off - prev > 3) h += '<tr class="gap"><td class="off">&#8942;</td><td colspan="' + g.ops.length + '" class="muted">' + (off - prev - 1) + ' offsets not shown</td></tr>';
    h += '<tr class="' + (conflict.has(off) ? 'conflict' : '') + '"><td class="off">' + (off === null ? 'no offset' : off) + '</td>';
    g.cells[i].forEach(cell => {
      h += '<td>' + cell.map(([k, v]) => '<span class="' + k + (focus.has(v) ? ' focus' : '') + (dup.has(v) ? ' dup' : '') + (never.has(v) ? ' never' : '') + '" title="' + (k === 'w' ? 'wrote ' : 'read ') + v + '">' + k.toUpperCase() + ' ' + v + '</span>').join('<br>') + '</td>';
    });
    h += '</tr>';
  });
  h += '</table>';
  if (g.hidden_ops) h += '<div class="note">' + g.hidden_ops + ' more ops touch these offsets (not shown).</div>';
  return h;
}

function anomalies() {
  const root = document.getElementById('anomaly-panels');
  if (!D.anomalies.length) { root.innerHTML = '<p>None.</p>'; return; }
  for (const p of D.anomalies) {
    const box = el('div', {id: 'anomaly-' + p.type});
    box.appendChild(el('h3', {}, esc(p.type) + ' <span class="muted">&mdash; ' + p.count + ' found, ' + (p.bad ? '<span class="count-bad">makes the run invalid</span>' : 'informational') + (p.count > p.examples.length ? ', first ' + p.examples.length + ' shown' : '') + '</span>'));
    let more = null;
    p.examples.forEach((a, i) => {
      const div = el('div', {class: 'anomaly', 'data-type': p.type, 'data-i': i});
      if (i === 3) { more = el('details', {class: 'more'}, '<summary>' + (p.examples.length - 3) + ' more example(s)</summary>'); box.appendChild(more); }
      div.appendChild(el('p', {}, esc(a.text)));
      div.appendChild(el('p', {}, 'Ops that prove it: ' + (a.ops.length ? a.ops.map(o => '<a class="op" data-op="' + o + '">op ' + o + '</a>').join('') : '<span class="muted">none named</span>') + (a.key ? ' &nbsp;key <b>' + esc(a.key) + '</b>' : '')));
      if (a.grid) {
        div.appendChild(el('div', {class: 'note'}, 'Offsets of ' + esc(a.key) + ' &times; operations: <span style="color:#1f4fb8">W</span> wrote, <span style="color:#3b7a3b">R</span> read; <span style="background:#fff1a8">highlighted</span> values are the anomaly\'s, red offsets hold more than one value, <span style="outline:2px solid #f08c00">outlined</span> values sit at more than one offset, <s>struck</s> values were never read by an ok op.'));
        div.appendChild(el('div', {class: 'grid'}, gridHtml(a.grid)));
      }
      (more || box).appendChild(div);
    });
    root.appendChild(box);
  }
}

function config() {
  document.getElementById('command').textContent = D.command || '(no argv recorded: this run directory has no test.json)';
  document.getElementById('test-json').textContent = D.test ? JSON.stringify(D.test, null, 2) : '(no test.json)';
  const run = D.verdict.run;
  document.getElementById('run-json').textContent = run ? JSON.stringify(run, null, 2) : '(no run summary in results.json)';
  document.getElementById('files').innerHTML = D.files.map(f => '<a href="' + encodeURI(f) + '">' + esc(f) + '</a>').join(' &middot; ');
  document.getElementById('copy').onclick = () => navigator.clipboard && navigator.clipboard.writeText(D.command || '');
}

async function main() {
  D = JSON.parse(document.getElementById('insync-data').textContent);
  performance.mark('insync:parsed');
  C = await decode(); N = C.index.length;
  performance.mark('insync:decoded');
  for (let i = 0; i < N; i++) if (C.lat[i] > maxLat) maxLat = C.lat[i];
  full = [0, D.duration_ms * 1.01]; view = full.slice();
  LAT = latRange();
  buildIndexes();
  window.insync = {data: D, cols: C, jumpTo, opBox, get view() { return view; }, get highlighted() { return highlighted >= 0 ? C.index[highlighted] : null; }, jumped: null};
  performance.mark('insync:indexed');
  header(); anomalies(); config(); faultList();
  performance.mark('insync:sections');
  plots.push(timelinePlot(), latencyPlot());
  const q = D.quantiles;
  plots.push(seriesPlot('quant', 220, q.t, q.v, QCOLORS, q.q.map(x => x === 1 ? 'max' : 'p' + (x * 100)), true));
  const th = D.throughput;
  plots.push(seriesPlot('tput', 220, th.t, th.v, COLORS, OUTCOME.map(o => o + ' ops/s'), false));
  plots.forEach(attach);
  document.addEventListener('click', ev => {
    const a = ev.target.closest('a.op');
    if (a) { ev.preventDefault(); jumpTo(Number(a.dataset.op)); }
  });
  document.getElementById('reset').onclick = () => { view = full.slice(); highlighted = -1; redraw(); };
  window.addEventListener('resize', redraw);
  pin(-1); redraw();
  performance.mark('insync:drawn');
  window.insync.renderedAt = performance.now();
  document.documentElement.dataset.rendered = 'true';
}
main().catch(err => { document.body.insertAdjacentHTML('afterbegin', '<pre style="color:#b00">report failed to render: ' + esc(err && err.stack || err) + '</pre>'); throw err; });
