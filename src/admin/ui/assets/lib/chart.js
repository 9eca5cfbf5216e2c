// A small time chart drawn as SVG by hand: one or more series of [time, value] points as lines
// over a shared time axis, with the largest value and the time span as labels. No library: the
// traffic page's charts need nothing more, and SVG attributes (not style attributes) keep it
// within the UI's Content-Security-Policy.
import { html } from './html.js';

const WIDTH = 320;
const HEIGHT = 120;
const PAD = { left: 44, right: 8, top: 10, bottom: 20 };

function formatValue(value, unit) {
  if (unit === 'USD') return value === 0 ? '$0' : value < 0.01 ? `$${value.toPrecision(2)}` : `$${value.toFixed(2)}`;
  if (value >= 1e6) return `${(value / 1e6).toFixed(1)}M`;
  if (value >= 1e3) return `${(value / 1e3).toFixed(1)}k`;
  return String(Math.round(value * 100) / 100);
}

/**
 * `series`: [{ name, className, values }] where values are numbers per point of `times` (ms).
 * `title` labels the chart for assistive technology and as its heading.
 */
export function TimeChart({ title, times, series, unit }) {
  const id = `chart-${title.replace(/\W+/g, '-').toLowerCase()}`;
  const max = Math.max(0, ...series.flatMap((s) => s.values));
  const top = max === 0 ? 1 : max;
  const start = times[0] ?? 0;
  const end = times[times.length - 1] ?? 0;
  const span = Math.max(1, end - start);
  const x = (time) => PAD.left + ((time - start) / span) * (WIDTH - PAD.left - PAD.right);
  const y = (value) => HEIGHT - PAD.bottom - (value / top) * (HEIGHT - PAD.top - PAD.bottom);
  const minutes = Math.round(span / 60000);
  const summary = series
    .map(
      (s) =>
        `${s.name}: ${formatValue(
          s.values.reduce((a, b) => a + b, 0),
          unit,
        )} in all`,
    )
    .join('; ');
  return html`<figure class="chart">
    <figcaption id=${id}>${title}</figcaption>
    <svg viewBox=${`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-labelledby=${id} aria-describedby=${`${id}-summary`}>
      <line class="axis" x1=${PAD.left} y1=${HEIGHT - PAD.bottom} x2=${WIDTH - PAD.right} y2=${HEIGHT - PAD.bottom} />
      <line class="axis" x1=${PAD.left} y1=${PAD.top} x2=${PAD.left} y2=${HEIGHT - PAD.bottom} />
      <text class="tick" x=${PAD.left - 4} y=${PAD.top + 4} text-anchor="end">${formatValue(max, unit)}</text>
      <text class="tick" x=${PAD.left - 4} y=${HEIGHT - PAD.bottom} text-anchor="end">0</text>
      <text class="tick" x=${WIDTH - PAD.right} y=${HEIGHT - 4} text-anchor="end">now</text>
      <text class="tick" x=${PAD.left} y=${HEIGHT - 4}>${times.length > 1 ? `${minutes || '<1'} min ago` : ''}</text>
      ${series.map((s) =>
        times.length === 1
          ? html`<circle class=${`line ${s.className}`} cx=${x(start) + 4} cy=${y(s.values[0])} r="3" />`
          : html`<polyline class=${`line ${s.className}`} fill="none" points=${times.map((t, i) => `${x(t).toFixed(1)},${y(s.values[i]).toFixed(1)}`).join(' ')} />`,
      )}
    </svg>
    <p class="legend" id=${`${id}-summary`}>
      ${series.map((s) => html`<span class=${`key ${s.className}`}>${s.name}</span> `)}
      <span class="muted">${times.length === 0 ? 'no points yet' : summary}</span>
    </p>
  </figure>`;
}
