// Traffic: the recent requests (status, latency, route, backend, model, tokens, cost, guard
// outcomes — the access log's fields of each), filtered by route, status class, model and text,
// new ones arriving live over server-sent events while the page is open; and requests, errors,
// tokens and cost per interval as charts, from the metrics. Nothing is captured while no page (or
// API client) watches; opening this page starts it.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api } from '../lib/api.js';
import { TimeChart } from '../lib/chart.js';
import { Link, StatusBadge } from '../lib/components.js';
import { html } from '../lib/html.js';

/** Rows kept on the page (the server keeps as many). */
const MAX_ROWS = 500;
const SERIES_REFRESH_MS = 10_000;

function filterQuery(filter) {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(filter)) if (value) query.set(name, value);
  return query.toString();
}

function Filters({ filter, setFilter, routes }) {
  const change = (name) => (event) => setFilter({ ...filter, [name]: event.target.value });
  return html`<form class="toolbar" role="search" aria-label="Filter requests" onSubmit=${(e) => e.preventDefault()}>
    <label>Route
      <select name="route" value=${filter.route} onChange=${change('route')}>
        <option value="">any</option>
        ${routes.map((route) => html`<option value=${route}>${route}</option>`)}
      </select>
    </label>
    <label>Status
      <select name="status" value=${filter.status} onChange=${change('status')}>
        <option value="">any</option>
        ${['2xx', '3xx', '4xx', '5xx'].map((s) => html`<option value=${s}>${s}</option>`)}
      </select>
    </label>
    <label>Model <input name="model" value=${filter.model} onChange=${change('model')} placeholder="exact name" /></label>
    <label>Text <input name="q" type="search" value=${filter.q} onInput=${change('q')} placeholder="path, error, user agent…" /></label>
  </form>`;
}

const number = (value) => (value === undefined ? '' : String(value));
const cost = (value) => (value === undefined ? '' : `$${value < 0.01 ? value.toPrecision(3) : value.toFixed(4)}`);

function Row({ entry }) {
  const f = entry.fields;
  const status = f['http.response.status_code'];
  const model = f['gen_ai.response.model'] ?? f['gen_ai.request.model'] ?? f['gen_ai.tool.name'] ?? '';
  return html`<tr class=${status >= 500 ? 'bad' : ''}>
    <td><time datetime=${new Date(entry.time).toISOString()}>${new Date(entry.time).toLocaleTimeString()}</time></td>
    <td>${status === undefined ? '—' : html`<${StatusBadge} ok=${status < 400} text=${String(status)} />`}</td>
    <td class="path">${f['http.request.method']} ${f['url.path']}</td>
    <td>${f.route ?? ''}</td>
    <td>${f.backend ?? ''}</td>
    <td>${model}</td>
    <td class="num">${number(f['gen_ai.usage.input_tokens'])}</td>
    <td class="num">${number(f['gen_ai.usage.output_tokens'])}</td>
    <td class="num">${cost(f['gw.ai.usage.cost.total'])}</td>
    <td class="num">${f.duration_ms.toFixed(1)}</td>
    <td>${f['gw.ai.guards'] ?? ''}${f.error ? html`<span class="error"> ${f.error}</span>` : ''}</td>
    <td><${Link} href=${`/ui/playground?record=${encodeURIComponent(entry.id)}#cel`} aria-label=${`Evaluate CEL against request ${entry.id}`}>CEL<//></td>
  </tr>`;
}

function Charts() {
  const [series, setSeries] = useState();
  const [error, setError] = useState();
  useEffect(() => {
    let live = true;
    const load = () =>
      api('traffic/series').then(
        (data) => live && setSeries(data),
        (failure) => live && setError(failure.message),
      );
    load();
    const timer = setInterval(load, SERIES_REFRESH_MS);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, []);
  if (error) return html`<p class="error" role="alert">Charts: ${error}</p>`;
  if (!series) return html`<p class="loading">Loading charts…</p>`;
  const times = series.points.map((p) => p.time);
  const of = (key) => series.points.map((p) => p[key]);
  return html`<section aria-labelledby="charts-title">
    <h2 id="charts-title">Over time <span class="muted">(per ${series.intervalMs / 1000} s, from the metrics)</span></h2>
    <div class="charts">
      <${TimeChart} title="Requests and errors" times=${times} series=${[
        { name: 'requests', className: 's1', values: of('requests') },
        { name: '5xx', className: 's2', values: of('serverErrors') },
        { name: '4xx', className: 's3', values: of('clientErrors') },
      ]} />
      <${TimeChart} title="Tokens" times=${times} series=${[
        { name: 'input', className: 's1', values: of('inputTokens') },
        { name: 'output', className: 's3', values: of('outputTokens') },
      ]} />
      <${TimeChart} title="Cost" unit="USD" times=${times} series=${[{ name: 'USD', className: 's1', values: of('costUsd') }]} />
    </div>
  </section>`;
}

export default function Traffic() {
  const [filter, setFilter] = useState({ route: '', status: '', model: '', q: '' });
  const [entries, setEntries] = useState([]);
  const [state, setState] = useState({ connected: false, error: undefined, skipped: 0 });
  const [paused, setPaused] = useState(false);
  const pausedRef = useRef(paused);
  pausedRef.current = paused;
  const query = filterQuery(filter);

  useEffect(() => {
    let live = true;
    let source;
    api(`traffic/recent?limit=${MAX_ROWS}${query ? `&${query}` : ''}`).then(
      (list) => {
        if (!live) return;
        setEntries(list.entries);
        setState((s) => ({ ...s, skipped: list.skipped, error: undefined }));
        source = new EventSource(`/ui/api/traffic/events${query ? `?${query}` : ''}`);
        source.addEventListener('open', () => setState((s) => ({ ...s, connected: true, error: undefined })));
        source.addEventListener('error', () => setState((s) => ({ ...s, connected: false })));
        source.addEventListener('request', (event) => {
          if (pausedRef.current) return;
          const entry = JSON.parse(event.data);
          setEntries((rows) => [entry, ...rows].slice(0, MAX_ROWS));
        });
        source.addEventListener('skipped', (event) =>
          setState((s) => ({ ...s, skipped: s.skipped + Number(event.data) })),
        );
      },
      (failure) => live && setState((s) => ({ ...s, error: failure.message })),
    );
    return () => {
      live = false;
      source?.close();
    };
  }, [query]);

  const routes = useMemo(
    () => [...new Set([filter.route, ...entries.map((e) => e.fields.route)].filter(Boolean))].sort(),
    [entries, filter.route],
  );

  return html`
    <h1>Traffic</h1>
    <${Charts} />
    <section aria-labelledby="recent-title">
      <h2 id="recent-title">Recent requests</h2>
      <${Filters} filter=${filter} setFilter=${setFilter} routes=${routes} />
      <p class="toolbar" aria-live="polite">
        <span class=${`badge ${state.connected ? 'ok' : 'bad'}`}>${state.connected ? (paused ? 'paused' : 'live') : 'not connected'}</span>
        <button type="button" onClick=${() => setPaused(!paused)} aria-pressed=${paused}>${paused ? 'Resume' : 'Pause'}</button>
        <span class="muted">${entries.length} shown${state.skipped > 0 ? `; ${state.skipped} more completed than the list takes (the charts count them all)` : ''}</span>
      </p>
      ${state.error && html`<p class="error" role="alert">${state.error}</p>`}
      <table class="traffic">
        <caption class="muted">Newest first; the fields are the access log's.</caption>
        <thead><tr>
          <th scope="col">Time</th><th scope="col">Status</th><th scope="col">Request</th><th scope="col">Route</th>
          <th scope="col">Backend</th><th scope="col">Model / tool</th><th scope="col">In</th><th scope="col">Out</th>
          <th scope="col">Cost</th><th scope="col">ms</th><th scope="col">Guards / error</th><th scope="col"><span class="muted">CEL</span></th>
        </tr></thead>
        <tbody>
          ${entries.length === 0 && html`<tr><td colspan="12" class="muted">No request yet: requests appear here as they complete.</td></tr>`}
          ${entries.map((entry) => html`<${Row} key=${entry.id} entry=${entry} />`)}
        </tbody>
      </table>
    </section>`;
}
