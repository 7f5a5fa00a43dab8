#include "timeline/stack_script.h"

namespace xmem::timeline
{

// Data: {events, groups: [[title, id, first layer, end layer]], layers: [names],
// buckets: [[first event, last event, bytes per layer...]], peak: event,
// steps: [[event, label]], blocks: [[module, op, bytes]], rest: [bytes, count]}.
const char *const k_stack_script = R"JS(
"use strict";
window.addEventListener("error", e => {
  document.getElementById("page-errors").textContent += e.message + "\n";
});
const D = JSON.parse(document.getElementById("xmem-data").textContent);
const COLORS = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
  "#ff9da7", "#9c755f", "#bab0ac", "#86bcb6", "#d37295"];
const esc = s => String(s).replace(/[&<>"]/g, c => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;"})[c]);
function fmt(b) {
  const u = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0, v = b;
  while (v >= 1024 && i < u.length - 1) { v /= 1024; ++i; }
  return (i ? v.toFixed(2) : v) + " " + u[i];
}
function stepAt(ev) {
  let label = "set-up";
  for (const [e, l] of D.steps) if (e <= ev) label = l;
  return label;
}
function bucketAt(ev) {
  let lo = 0, hi = D.buckets.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (D.buckets[mid][0] <= ev) lo = mid; else hi = mid - 1;
  }
  return lo;
}
const tip = document.getElementById("tip");
function showTip(ev, html) {
  tip.innerHTML = html;
  tip.style.display = "block";
  tip.style.left = (ev.pageX + 14) + "px";
  tip.style.top = (ev.pageY + 14) + "px";
}
const W = 1200, H = 340, L = 90, R = 30, T = 34, B = 36, PW = W - L - R, PH = H - T - B;
function chart([title, id, from, to]) {
  const cum = D.buckets.map(b => {
    const row = [0];
    for (let k = from; k < to; ++k) row.push(row[row.length - 1] + b[2 + k]);
    return row;
  });
  const top = Math.max(1, ...cum.map(r => r[r.length - 1])) * 1.1;
  const x = e => L + e / Math.max(1, D.events) * PW, y = v => T + PH - v / top * PH;
  let s = `<svg viewBox="0 0 ${W} ${H}" class="stack" id="chart-${id}">`;
  for (let i = 0; i <= 5; ++i) {
    const v = top / 1.1 * i / 5;
    s += `<line class="grid" x1="${L}" x2="${L + PW}" y1="${y(v)}" y2="${y(v)}"/>` +
      `<text class="tick" x="${L - 6}" y="${y(v) + 4}" text-anchor="end">${fmt(Math.round(v))}</text>`;
  }
  for (const [e, l] of D.steps)
    s += `<line class="iter" x1="${x(e)}" x2="${x(e)}" y1="${T}" y2="${T + PH}"><title>${esc(l)}</title></line>`;
  for (let k = 0; k < to - from; ++k) {
    let upper = "", lower = "";
    D.buckets.forEach((b, i) => {
      upper += `${x(b[0])},${y(cum[i][k + 1])} ${x(b[1] + 1)},${y(cum[i][k + 1])} `;
      lower = `${x(b[1] + 1)},${y(cum[i][k])} ${x(b[0])},${y(cum[i][k])} ` + lower;
    });
    const name = D.layers[from + k];
    s += `<polygon class="layer" fill="${COLORS[k % COLORS.length]}" points="${upper}${lower}">` +
      `<title>${esc(name)}</title></polygon>`;
  }
  const p = bucketAt(D.peak), peak = cum[p][to - from], px = x(D.peak);
  s += `<line class="peakmark" data-bytes="${peak}" x1="${px}" x2="${px}" y1="${T - 6}" y2="${T + PH}"/>` +
    `<text class="peaklabel" x="${px > L + PW / 2 ? px - 6 : px + 6}" y="${T - 10}" ` +
    `text-anchor="${px > L + PW / 2 ? "end" : "start"}">peak ${fmt(peak)} in ${esc(stepAt(D.peak))} ` +
    `(event ${D.peak})</text>`;
  s += `<rect class="frame" x="${L}" y="${T}" width="${PW}" height="${PH}"/></svg>`;
  let legend = "";
  for (let k = 0; k < to - from; ++k)
    legend += `<span><i style="background:${COLORS[k % COLORS.length]}"></i>${esc(D.layers[from + k])}</span>`;
  const box = document.createElement("section");
  box.innerHTML = `<h2>${esc(title)}</h2><p class="legend">${legend}</p>${s}`;
  document.getElementById("stacks").appendChild(box);
  const svg = box.querySelector("svg");
  svg.addEventListener("mousemove", ev => {
    const r = svg.getBoundingClientRect(), at = ((ev.clientX - r.left) * W / r.width - L) / PW;
    if (at < 0 || at > 1) { tip.style.display = "none"; return; }
    const i = bucketAt(Math.floor(at * D.events)), b = D.buckets[i];
    let rows = "";
    for (let k = to - from - 1; k >= 0; --k)
      if (b[2 + from + k]) rows += `<tr><td>${esc(D.layers[from + k])}</td><td>${fmt(b[2 + from + k])}</td></tr>`;
    showTip(ev, `<b>${esc(stepAt(b[0]))}</b>, events ${b[0]}..${b[1]}<table>${rows}` +
      `<tr><th>stacked</th><th>${fmt(cum[i][to - from])}</th></tr></table>`);
  });
  svg.addEventListener("mouseleave", () => { tip.style.display = "none"; });
  document.getElementById("stacked-peak-" + id).textContent = svg.querySelector(".peakmark").dataset.bytes;
}
function blocks() {
  const total = D.blocks.reduce((a, b) => a + b[2], 0) + D.rest[0];
  let s = `<svg viewBox="0 0 ${W} 50" class="blocks">`, at = L;
  const rect = (w, fill, data, label) => {
    s += `<rect x="${at}" y="4" width="${Math.max(w, 0.5)}" height="40" fill="${fill}" ${data}><title>${esc(label)}</title></rect>`;
    at += w;
  };
  D.blocks.forEach(([m, o, b], i) => rect(b / Math.max(1, total) * PW, COLORS[i % COLORS.length],
    `data-module="${esc(m)}" data-op="${esc(o)}" data-bytes="${b}"`, `${m} · ${o} · ${fmt(b)}`));
  if (D.rest[1])
    rect(D.rest[0] / Math.max(1, total) * PW, "#ddd", `data-bytes="${D.rest[0]}"`,
      `${D.rest[1]} smaller storages · ${fmt(D.rest[0])}`);
  s += "</svg>";
  const box = document.createElement("section");
  box.innerHTML = `<h2>Live at the peak: the ${D.blocks.length} largest storages, then the rest</h2>${s}`;
  document.getElementById("stacks").appendChild(box);
  for (const r of box.querySelectorAll("rect[data-module]"))
    r.addEventListener("mousemove", ev => showTip(ev, `<b>${esc(r.dataset.module)}</b><br>op ` +
      `${esc(r.dataset.op)}<br>${fmt(Number(r.dataset.bytes))}`));
  box.querySelector("svg").addEventListener("mouseleave", () => { tip.style.display = "none"; });
}
D.groups.forEach(chart);
blocks();
)JS";

} // namespace xmem::timeline
