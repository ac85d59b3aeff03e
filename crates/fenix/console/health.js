// Endpoint health: success rate and attempts over the last 24 hours, drawn by
// the page as an inline SVG chart from the stats API (no chart library).
//
// The stats API answers totals over a window ending now; the hourly buckets
// are the differences between the windows 1 h, 2 h, … 24 h.

import { api, seg } from './api.js';
import { el, svg, replace, message } from './dom.js';

const HOURS = 24;

const statsPath = (ctx, epId, window) => `/v1/apps/${seg(ctx.app)}/endpoints/${seg(epId)}/stats?window=${window}`;

const pct = (rate) => (rate === null || rate === undefined ? '—' : `${(rate * 100).toFixed(rate === 1 || rate === 0 ? 0 : 1)} %`);

/** One line for the endpoint list: "98.5 % of 200 attempts" or "no attempts". */
export async function healthSummary(ctx, epId) {
  const s = await api('GET', statsPath(ctx, epId, '24h'));
  if (!s.attempts) return 'no attempts';
  return `${pct(s.success_rate)} of ${s.attempts} ${s.attempts === 1 ? 'attempt' : 'attempts'}`;
}

/** The health section of an endpoint's page. */
export async function renderHealth(ctx, slot, epId) {
  replace(slot, el('h2', { id: 'health-h' }, 'Health, last 24 hours'), el('p', { class: 'muted' }, 'Loading…'));
  const windows = Array.from({ length: HOURS }, (_, i) => `${i + 1}h`);
  let cumulative;
  try {
    cumulative = await Promise.all(windows.map((w) => api('GET', statsPath(ctx, epId, w))));
  } catch (err) {
    if (err.status !== 401 && ctx.alive()) replace(slot, el('h2', { id: 'health-h' }, 'Health'), message(err.message, 'error'));
    return;
  }
  if (!ctx.alive()) return;
  // buckets[0] is the hour ending now; buckets[23] the one 24 h ago.
  const buckets = cumulative.map((s, i) => {
    const prev = i === 0 ? { attempts: 0, successes: 0 } : cumulative[i - 1];
    const attempts = Math.max(0, s.attempts - prev.attempts);
    const successes = Math.min(attempts, Math.max(0, s.successes - prev.successes));
    return { hoursAgo: i, attempts, successes, failures: attempts - successes };
  });
  const day = cumulative[HOURS - 1];
  const stat = (label, value, testid) => el('div', { class: 'stat' }, el('strong', { testid }, String(value)), label);
  replace(slot,
    el('h2', { id: 'health-h' }, 'Health, last 24 hours'),
    el('div', { class: 'stats', testid: 'health-stats' },
      stat('success rate', pct(day.success_rate), 'health-success-rate'),
      stat('attempts', day.attempts, 'health-attempts'),
      stat('failed attempts', day.failures, 'health-failures'),
      stat('failed deliveries (all time)', day.dead_letter, 'health-dead-letter'),
      stat('skipped deliveries (all time)', day.skipped, 'health-skipped')),
    chart(buckets),
    el('div', { class: 'legend', 'aria-hidden': 'true' },
      el('span', {}, el('span', { class: 'swatch swatch-ok' }), 'successful attempts'),
      el('span', {}, el('span', { class: 'swatch swatch-bad' }), 'failed attempts'),
      el('span', {}, el('span', { class: 'swatch swatch-rate' }), 'success rate')),
    hourTable(buckets),
    day.client_certificate_expires_soon
      ? message(`The client certificate expires at ${day.client_certificate_expires_at}: rotate it before then.`, 'error', 'health-client-certificate-expiring')
      : null);
}

/** Stacked bars per hour (oldest left) and the success-rate line, in a 600×200 box. */
function chart(buckets) {
  const W = 600, H = 200, left = 34, right = 8, top = 10, bottom = 24;
  const plotW = W - left - right, plotH = H - top - bottom;
  const max = Math.max(1, ...buckets.map((b) => b.attempts));
  const slot = plotW / HOURS;
  const barW = Math.max(2, slot * 0.7);
  const y = (n) => top + plotH - (n / max) * plotH;
  const ordered = [...buckets].reverse();
  const parts = [
    svg('title', { text: 'Attempts per hour and success rate over the last 24 hours' }),
    svg('line', { class: 'axis', x1: left, y1: top + plotH, x2: W - right, y2: top + plotH }),
    svg('line', { class: 'axis', x1: left, y1: top, x2: left, y2: top + plotH }),
    svg('text', { class: 'label', x: left - 4, y: top + 8, 'text-anchor': 'end', text: String(max) }),
    svg('text', { class: 'label', x: left - 4, y: top + plotH, 'text-anchor': 'end', text: '0' }),
    svg('text', { class: 'label', x: left, y: H - 6, text: '24 h ago' }),
    svg('text', { class: 'label', x: W - right, y: H - 6, 'text-anchor': 'end', text: 'now' }),
  ];
  const points = [];
  ordered.forEach((b, i) => {
    const x = left + i * slot + (slot - barW) / 2;
    const g = svg('g', { 'data-testid': 'health-bar', 'data-hour': String(b.hoursAgo), 'data-attempts': String(b.attempts), 'data-successes': String(b.successes) },
      svg('title', { text: `${b.hoursAgo === 0 ? 'last hour' : `${b.hoursAgo}–${b.hoursAgo + 1} h ago`}: ${b.attempts} attempts, ${b.successes} successful` }));
    if (b.successes > 0) g.append(svg('rect', { class: 'bar-ok', x: x.toFixed(1), y: y(b.successes).toFixed(1), width: barW.toFixed(1), height: (top + plotH - y(b.successes)).toFixed(1) }));
    if (b.failures > 0) g.append(svg('rect', { class: 'bar-bad', x: x.toFixed(1), y: y(b.attempts).toFixed(1), width: barW.toFixed(1), height: (y(b.successes) - y(b.attempts)).toFixed(1) }));
    parts.push(g);
    if (b.attempts > 0) points.push(`${(x + barW / 2).toFixed(1)},${(top + plotH - (b.successes / b.attempts) * plotH).toFixed(1)}`);
  });
  if (points.length > 1) parts.push(svg('polyline', { class: 'rate', points: points.join(' ') }));
  else if (points.length === 1) {
    const [cx, cy] = points[0].split(',');
    parts.push(svg('circle', { class: 'rate', cx, cy, r: 3 }));
  }
  return svg('svg', { class: 'chart', viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': 'Attempts per hour and success rate, last 24 hours', 'data-testid': 'endpoint-health-chart' }, ...parts);
}

/** The same numbers as a table, for screen readers and exact values (hours with attempts only). */
function hourTable(buckets) {
  const busy = buckets.filter((b) => b.attempts > 0);
  if (busy.length === 0) return el('p', { class: 'muted', testid: 'health-none' }, 'No attempts in the last 24 hours.');
  return el('details', {}, el('summary', {}, 'Hour by hour'),
    el('ul', {}, busy.map((b) => el('li', {},
      `${b.hoursAgo === 0 ? 'Last hour' : `${b.hoursAgo}–${b.hoursAgo + 1} h ago`}: ${b.attempts} attempts, ${b.successes} successful (${pct(b.successes / b.attempts)})`))));
}
