// Models: per listener and route, the discovery list (what GET /v1/models answers there) and the
// models served with their live health: score, eviction and time to restore; a virtual model's
// routing and each target's health; an `ai` GwBackend's priority groups. With --workers N each
// worker keeps its own health and is shown apart. Refresh to see it change.
import { Pending, StatusBadge, useApi } from '../lib/components.js';
import { html } from '../lib/html.js';

function Health({ health }) {
  if (!health) return html`<td colspan="3">—</td>`;
  const evicted = health.state === 'Evicted';
  return html`<td>${Math.round(health.score)}</td>
    <td><${StatusBadge} ok=${!evicted} text=${health.state} />${health.evictions > 0 ? html` <span class="muted">(${health.evictions} evictions)</span>` : ''}</td>
    <td>${evicted ? `restored in ${(health.restoresInMs / 1000).toFixed(1)} s` : '—'}</td>`;
}

const HEALTH_HEADERS = html`<th scope="col">Health score</th><th scope="col">State</th><th scope="col">Restores</th>`;

function Model({ model }) {
  if (model.kind === 'virtual')
    return html`<tr><th scope="row">${model.key}</th><td>${model.pattern}</td><td>virtual, ${model.routing}${model.public ? '' : ', private'}</td><td colspan="3">
      <table>
        <caption>Targets of ${model.key}</caption>
        <thead><tr><th scope="col">Target</th><th scope="col">${model.routing === 'failover' ? 'Priority' : model.routing === 'weighted' ? 'Weight' : ''}</th>${HEALTH_HEADERS}</tr></thead>
        <tbody>${model.targets.map((t) => html`<tr><th scope="row">${t.model}${t.upstreamModel ? ` (as ${t.upstreamModel})` : ''}</th><td>${t.priority ?? t.weight ?? ''}</td><${Health} health=${t.health} /></tr>`)}</tbody>
      </table></td></tr>`;
  if (model.kind === 'error')
    return html`<tr class="bad"><th scope="row">${model.key}</th><td>${model.pattern}</td><td>not served</td><td colspan="3">${model.message}</td></tr>`;
  return html`<tr><th scope="row">${model.key}</th><td>${model.pattern}</td><td>concrete${model.public ? '' : ', private'}</td><${Health} health=${model.health} /></tr>`;
}

function Report({ report }) {
  const where =
    report.route === '' ? `listener ${report.listener}'s own models` : `HTTPRoute ${report.route} rule ${report.rule}`;
  return html`<section class="card">
    <h3>Gateway ${report.gateway} · listener ${report.listener} (port ${report.port}) · ${where} · ${report.backend}</h3>
    ${report.discovery && html`<p>Discovery (GET /v1/models): ${report.discovery.length === 0 ? html`<span class="muted">no Public model</span>` : report.discovery.map((id) => html`<code class="badge">${id}</code> `)}</p>`}
    ${
      report.models &&
      html`<table>
      <caption>Models</caption>
      <thead><tr><th scope="col">GwModel</th><th scope="col">Name</th><th scope="col">Kind</th>${HEALTH_HEADERS}</tr></thead>
      <tbody>${report.models.map((m) => html`<${Model} key=${m.key} model=${m} />`)}</tbody>
    </table>`
    }
    ${
      report.providers &&
      html`<table>
      <caption>Providers by priority group</caption>
      <thead><tr><th scope="col">Provider</th><th scope="col">Group</th>${HEALTH_HEADERS}</tr></thead>
      <tbody>${report.providers.map((p) => html`<tr><th scope="row">${p.name}</th><td>${p.group}</td><${Health} health=${p} /></tr>`)}</tbody>
    </table>`
    }
    ${report.endpoint && html`<table><caption>Passive health</caption><thead><tr>${HEALTH_HEADERS}</tr></thead><tbody><tr><${Health} health=${report.endpoint} /></tr></tbody></table>`}
  </section>`;
}

export default function Models() {
  const state = useApi('models');
  if (!state.data) return html`<h1>Models</h1><${Pending} state=${state} />`;
  const { processes } = state.data;
  const many = processes.length > 1;
  return html`<h1>Models</h1>
    <p><button type="button" onClick=${state.reload}>Refresh</button></p>
    ${processes.map(
      (process) => html`<section aria-label=${many ? `Worker ${process.worker}` : 'Models served'}>
        ${many && html`<h2>Worker ${process.worker}</h2>`}
        ${process.reports.length === 0 && html`<p class="muted">No model, provider group or backend with passive health is served.</p>`}
        ${process.reports.map((r, i) => html`<${Report} key=${i} report=${r} />`)}
      </section>`,
    )}`;
}
