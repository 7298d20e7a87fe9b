// The records-over-time histogram: bars stacked by criticality (the badges' colours), drawn as SVG from
// /api/histogram; each bar's <title> gives its counts, and it carries its interval for click-to-filter.
const SVG = 'http://www.w3.org/2000/svg';
const LABELS = ['informational', 'low', 'medium', 'high', 'critical'];
const WIDTH = 1200;
const HEIGHT = 160;
const AXIS = 18;

function svg(name, attributes) {
  const element = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, String(value));
  return element;
}

function stamp(ms) {
  return new Date(ms).toISOString().slice(0, 16).replace('T', ' ');
}

/** Draws `h` (an /api/histogram answer) into `container`; criticalities below `min` are left out. */
export function drawHistogram(container, h, min) {
  const from = Date.parse(h.from);
  const kept = h.buckets.map((counts) => counts.map((n, c) => (c >= min ? n : 0)));
  const top = Math.max(1, ...kept.map((counts) => counts.reduce((a, b) => a + b, 0)));
  const plot = HEIGHT - AXIS;
  const step = WIDTH / kept.length;
  const root = svg('svg', { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, role: 'img', class: 'histogram' });
  root.setAttribute('aria-label', `records per ${h.range === '24h' ? '10 minutes' : 'hour'}, by criticality`);
  kept.forEach((counts, i) => {
    const start = from + i * h.bucketMs;
    const total = counts.reduce((a, b) => a + b, 0);
    const bar = svg('g', { class: 'bar' });
    bar.dataset.from = new Date(start).toISOString();
    bar.dataset.to = new Date(start + h.bucketMs).toISOString();
    bar.dataset.counts = counts.join(',');
    // The whole column takes the click and the hover, however short the bar.
    bar.append(svg('rect', { class: 'hit', x: i * step, y: 0, width: step, height: plot }));
    let y = plot;
    counts.forEach((n, c) => {
      if (n === 0) return;
      const height = (n / top) * plot;
      y -= height;
      const rect = svg('rect', {
        class: `seg c${c}`,
        x: i * step + 0.5,
        y,
        width: Math.max(step - 1, 1),
        height,
      });
      rect.dataset.count = String(n);
      rect.dataset.criticality = String(c);
      bar.append(rect);
    });
    const title = svg('title', {});
    const parts = [4, 3, 2, 1, 0].filter((c) => counts[c] > 0).map((c) => `${counts[c]} ${LABELS[c]}`);
    title.textContent = `${stamp(start)}–${stamp(start + h.bucketMs).slice(11)} UTC: ${total} records${parts.length ? ` (${parts.join(', ')})` : ''}`;
    bar.append(title);
    root.append(bar);
  });
  // A label at each day (7 d) or each 3 hours (24 h), in UTC.
  const every = h.range === '24h' ? 18 : 24;
  for (let i = 0; i < kept.length; i++) {
    const start = from + i * h.bucketMs;
    if (Math.floor(start / h.bucketMs) % every !== 0) continue;
    const label = svg('text', { x: i * step + 2, y: HEIGHT - 4, class: 'axis' });
    label.textContent = h.range === '24h' ? `${stamp(start).slice(11)}` : stamp(start).slice(5, 10);
    root.append(svg('line', { x1: i * step, x2: i * step, y1: 0, y2: plot, class: 'tick' }), label);
  }
  const peak = svg('text', { x: 4, y: 12, class: 'axis peak' });
  peak.textContent = `max ${top}`;
  root.append(peak);
  container.replaceChildren(root);
}
