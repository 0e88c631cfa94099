#include "app/operations/status_page.hpp"

namespace rivet::app {

namespace {

// The page keeps two minutes of samples. Latency percentiles are computed from the
// histogram's growth over the last second (interpolated inside a bucket), so they describe
// that second rather than the whole uptime. Each chart's canvas carries data-points, and the
// body data-samples, so that a headless browser test can see that data arrived.
constexpr std::string_view kPage = R"HTML(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>rivet status</title>
<link rel="icon" href="data:,">
<style>
  :root { --bg:#0f1419; --panel:#1a2129; --text:#d8dee6; --dim:#8a96a3; --grid:#2a333d; }
  * { box-sizing: border-box; }
  body { margin: 0; padding: 16px 20px; background: var(--bg); color: var(--text);
         font: 14px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; }
  h1 { font-size: 18px; margin: 0 0 4px; font-weight: 600; }
  #state { color: var(--dim); margin-bottom: 14px; }
  .tiles { display: grid; grid-template-columns: repeat(auto-fill, minmax(150px, 1fr));
           gap: 10px; margin-bottom: 14px; }
  .tile { background: var(--panel); border-radius: 6px; padding: 8px 12px; }
  .tile b { display: block; font-size: 20px; font-weight: 600; }
  .tile span { color: var(--dim); font-size: 12px; }
  .charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(420px, 1fr)); gap: 12px; }
  .chart { background: var(--panel); border-radius: 6px; padding: 8px 10px; }
  .chart h2 { font-size: 13px; margin: 0 0 4px; font-weight: 600; }
  .legend { font-size: 12px; color: var(--dim); }
  .legend i { display: inline-block; width: 10px; height: 3px; margin: 0 4px 3px 10px; }
  canvas { width: 100%; height: 170px; display: block; }
</style>
</head>
<body data-samples="0">
<h1>rivet status</h1>
<div id="state">connecting…</div>
<div class="tiles">
  <div class="tile"><b id="t-rps">–</b><span>requests/s</span></div>
  <div class="tile"><b id="t-total">–</b><span>requests since start</span></div>
  <div class="tile"><b id="t-p99">–</b><span>p99 latency</span></div>
  <div class="tile"><b id="t-conn">–</b><span>open connections</span></div>
  <div class="tile"><b id="t-queue">–</b><span>worker queue</span></div>
  <div class="tile"><b id="t-limited">–</b><span>rate-limited (429)</span></div>
  <div class="tile"><b id="t-cache">–</b><span>file cache hit ratio</span></div>
  <div class="tile"><b id="t-rss">–</b><span>resident memory</span></div>
</div>
<div class="charts">
  <div class="chart"><h2>Requests per second</h2><div class="legend" id="l-rps"></div><canvas id="c-rps"></canvas></div>
  <div class="chart"><h2>Latency percentiles (µs)</h2><div class="legend" id="l-lat"></div><canvas id="c-lat"></canvas></div>
  <div class="chart"><h2>Open connections</h2><div class="legend" id="l-conn"></div><canvas id="c-conn"></canvas></div>
  <div class="chart"><h2>Worker queue depth</h2><div class="legend" id="l-queue"></div><canvas id="c-queue"></canvas></div>
  <div class="chart"><h2>File cache hit ratio (%)</h2><div class="legend" id="l-cache"></div><canvas id="c-cache"></canvas></div>
  <div class="chart"><h2>Rate-limited per second</h2><div class="legend" id="l-limited"></div><canvas id="c-limited"></canvas></div>
</div>
<script>
"use strict";
const KEEP = 120;
const charts = {
  rps: [{ name: "requests/s", color: "#4fc3f7" }],
  lat: [{ name: "p50", color: "#81c784" }, { name: "p90", color: "#ffb74d" },
        { name: "p99", color: "#e57373" }],
  conn: [{ name: "open", color: "#ba68c8" }],
  queue: [{ name: "waiting", color: "#fff176" }],
  cache: [{ name: "hit %", color: "#4db6ac" }],
  limited: [{ name: "429/s", color: "#ff8a65" }],
};
for (const [id, lines] of Object.entries(charts)) {
  for (const l of lines) l.data = [];
  document.getElementById("l-" + id).innerHTML =
    lines.map(l => `<i style="background:${l.color}"></i>${l.name}`).join("");
}

function fmt(n, digits = 0) {
  if (n === null || n === undefined || !isFinite(n)) return "–";
  if (n >= 1e9) return (n / 1e9).toFixed(1) + "G";
  if (n >= 1e6) return (n / 1e6).toFixed(1) + "M";
  if (n >= 1e4) return (n / 1e3).toFixed(1) + "k";
  return n.toFixed(digits);
}
function fmtUs(us) {
  if (!isFinite(us)) return "–";
  return us >= 1e6 ? (us / 1e6).toFixed(2) + " s" : us >= 1e3 ? (us / 1e3).toFixed(1) + " ms"
                                                              : us.toFixed(0) + " µs";
}

// The q-quantile of a histogram of counts under upper bounds (µs), linear inside a bucket.
function quantile(counts, bounds, q) {
  const total = counts.reduce((a, b) => a + b, 0);
  if (total === 0) return null;
  const want = q * total;
  let seen = 0;
  for (let i = 0; i < counts.length; i++) {
    if (counts[i] > 0 && seen + counts[i] >= want) {
      const lo = i === 0 ? 0 : bounds[i - 1];
      const hi = i < bounds.length ? bounds[i] : bounds[bounds.length - 1] * 2;
      return lo + (hi - lo) * ((want - seen) / counts[i]);
    }
    seen += counts[i];
  }
  return bounds[bounds.length - 1];
}

function draw(id) {
  const canvas = document.getElementById("c-" + id);
  const lines = charts[id];
  const ratio = window.devicePixelRatio || 1;
  const w = canvas.clientWidth, h = canvas.clientHeight;
  canvas.width = Math.round(w * ratio);
  canvas.height = Math.round(h * ratio);
  const g = canvas.getContext("2d");
  g.scale(ratio, ratio);
  g.clearRect(0, 0, w, h);
  let max = 0;
  for (const l of lines) for (const v of l.data) if (v !== null && v > max) max = v;
  max = max > 0 ? max * 1.15 : 1;
  const left = 46, right = 6, top = 6, bottom = 16;
  const pw = w - left - right, ph = h - top - bottom;
  g.font = "11px system-ui, sans-serif";
  g.fillStyle = "#8a96a3";
  g.strokeStyle = "#2a333d";
  g.lineWidth = 1;
  for (let i = 0; i <= 4; i++) {
    const y = top + ph - (ph * i) / 4;
    g.beginPath(); g.moveTo(left, y); g.lineTo(left + pw, y); g.stroke();
    g.fillText(fmt((max * i) / 4, max < 10 ? 1 : 0), 2, y + 4);
  }
  g.fillText(`${KEEP} s`, left, h - 2);
  let points = 0;
  for (const l of lines) {
    g.strokeStyle = l.color;
    g.lineWidth = 2;
    g.beginPath();
    let started = false;
    l.data.forEach((v, i) => {
      if (v === null) { started = false; return; }
      const x = left + pw - ((l.data.length - 1 - i) * pw) / (KEEP - 1);
      const y = top + ph - (v / max) * ph;
      if (started) g.lineTo(x, y); else g.moveTo(x, y);
      started = true;
      points++;
    });
    g.stroke();
  }
  canvas.dataset.points = String(points);
}

function push(id, values) {
  charts[id].forEach((l, i) => {
    l.data.push(values[i]);
    if (l.data.length > KEEP) l.data.shift();
  });
  draw(id);
}

let prev = null, samples = 0;
async function tick() {
  let now;
  try {
    const r = await fetch("status.json", { cache: "no-store" });
    if (!r.ok) throw new Error("HTTP " + r.status);
    now = await r.json();
  } catch (e) {
    document.getElementById("state").textContent = "cannot reach the server (" + e.message + ")";
    return;
  }
  const dt = prev ? Math.max(0.001, now.uptime_s - prev.uptime_s) : 0;
  const rps = prev ? Math.max(0, (now.requests - prev.requests) / dt) : 0;
  const delta = prev ? now.latency_counts.map((c, i) => Math.max(0, c - prev.latency_counts[i]))
                     : now.latency_counts;
  const b = now.latency_bounds_us;
  const p = [quantile(delta, b, 0.5), quantile(delta, b, 0.9), quantile(delta, b, 0.99)];
  const limited = prev ? Math.max(0, (now.rate_limited - prev.rate_limited) / dt) : 0;
  let hit = null;
  if (now.cache) {
    const hits = now.cache.hits - (prev && prev.cache ? prev.cache.hits : 0);
    const misses = now.cache.misses - (prev && prev.cache ? prev.cache.misses : 0);
    hit = hits + misses > 0 ? (100 * hits) / (hits + misses) : null;
  }
  push("rps", [rps]);
  push("lat", p);
  push("conn", [now.connections]);
  push("queue", [now.queue_depth]);
  push("cache", [hit]);
  push("limited", [limited]);

  document.getElementById("t-rps").textContent = fmt(rps);
  document.getElementById("t-total").textContent = fmt(now.requests);
  document.getElementById("t-p99").textContent = p[2] === null ? "–" : fmtUs(p[2]);
  document.getElementById("t-conn").textContent = fmt(now.connections);
  document.getElementById("t-queue").textContent = fmt(now.queue_depth);
  document.getElementById("t-limited").textContent =
    now.rate_limiting ? fmt(now.rate_limited) : "off";
  document.getElementById("t-cache").textContent =
    !now.cache ? "no cache" : hit === null ? "–" : hit.toFixed(1) + " %";
  document.getElementById("t-rss").textContent = fmt(now.rss_bytes / 1048576, 1) + " MiB";
  const up = Math.floor(now.uptime_s);
  document.getElementById("state").textContent =
    `up ${Math.floor(up / 3600)}h ${Math.floor(up / 60) % 60}m ${up % 60}s · ` +
    `${now.loops} I/O loops, ${now.workers} workers · updated ${new Date().toLocaleTimeString()}`;
  prev = now;
  document.body.dataset.samples = String(++samples);
}

tick();
setInterval(tick, 1000);
window.addEventListener("resize", () => Object.keys(charts).forEach(draw));
</script>
</body>
</html>
)HTML";

}  // namespace

std::string_view status_page_html() {
    return kPage;
}

}  // namespace rivet::app
