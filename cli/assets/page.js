const $ = (id) => document.getElementById(id);
const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({"&":"&amp;","<":"&lt;",">":"&gt;","\"":"&quot;"}[c]));
const f2 = (v) => v == null ? "–" : (Math.round(v * 100) / 100).toFixed(2);
const sg = (v) => v == null ? "–" : (v > 0 ? "+" : "") + f2(v);
const cls = (v) => v > 0 ? "up" : v < 0 ? "down" : "";
const NS = "http://www.w3.org/2000/svg";
function card(label, big, small, c) {
  return '<div class="card"><div class="label">' + label + '</div><div class="big ' + (c || "") + '">' + big + '</div><div class="note">' + (small || "") + '</div></div>';
}
function el(name, attrs, parent) {
  const e = document.createElementNS(NS, name);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (parent) parent.appendChild(e);
  return e;
}
function text(parent, x, y, s, anchor) { const t = el("text", {x: x, y: y, "text-anchor": anchor || "middle"}, parent); t.textContent = s; return t; }

// The smallest of 1, 2, 5 × 10^k that is at least x.
function nice(x) {
  const e = Math.pow(10, Math.floor(Math.log10(x)));
  return [1, 2, 5, 10].map((m) => m * e).find((v) => v >= x * (1 - 1e-9));
}

function bars(target, labels, series, colors, opts) {
  const W = 560, H = 220, L = 40, B = 28, T = 8;
  const svg = el("svg", {viewBox: "0 0 " + W + " " + H, width: "100%"});
  // Counts are whole: ticks fall on a round step (1, 2 or 5 × 10^k) and the axis ends on one.
  const step = Math.max(1, nice(Math.max(1, ...series.flat()) / 4));
  const ticks = Math.max(1, Math.ceil(Math.max(1, ...series.flat()) / step)), max = ticks * step;
  const n = labels.length, bw = (W - L - 8) / n, inner = bw * 0.84 / series.length;
  for (let t = 0; t <= ticks; t++) {
    const y = H - B - (H - B - T) * t / ticks;
    el("line", {x1: L, x2: W - 4, y1: y, y2: y, stroke: "#e8ebf0"}, svg);
    text(svg, L - 5, y + 3, String(t * step), "end");
  }
  labels.forEach((lab, i) => {
    series.forEach((s, j) => {
      const h = (H - B - T) * s[i] / max;
      const r = el("rect", {x: L + i * bw + bw * 0.08 + j * inner, y: H - B - h, width: Math.max(inner - 1, 1), height: h, fill: colors[j](i)}, svg);
      const tt = el("title", {}, r); tt.textContent = lab + ": " + s[i];
    });
    if (n <= 24 || i % Math.ceil(n / 12) === 0) text(svg, L + i * bw + bw / 2, H - B + 14, lab);
  });
  if (opts && opts.xlabel) text(svg, (W + L) / 2, H - 2, opts.xlabel);
  target.appendChild(svg);
}

