// Routes & backends: every HTTPRoute with its matches and backends, every backend, and for the one
// chosen (?route=ns/name[&rule=r] or ?backend=ns/name[&section=s]) the effective frontend,
// traffic and backend policy field by field, exactly as gw explain prints it.
import { Conditions, Link, ObjectLink, Pending, useApi } from '../lib/components.js';
import { html } from '../lib/html.js';

function provenance(p) {
  return `${p.source} (${p.level}, on ${p.target})`;
}

function matchText(match) {
  const parts = [];
  if (match.method) parts.push(match.method);
  if (match.path) parts.push(`${match.path.type ?? 'PathPrefix'} ${match.path.value ?? '/'}`);
  for (const header of match.headers ?? [])
    parts.push(`header ${header.name}${header.type === 'RegularExpression' ? ' ~ ' : ' = '}${header.value}`);
  for (const param of match.queryParams ?? []) parts.push(`query ${param.name} = ${param.value}`);
  return parts.join(', ') || 'everything';
}

function Section({ section }) {
  const id = `section-${section.title.replace(/[^a-z0-9]+/gi, '-')}`;
  if (section.fields.length === 0) return html`<p><strong>${section.title}</strong>: nothing set</p>`;
  return html`<table aria-labelledby=${id}>
    <caption id=${id}>${section.title}</caption>
    <thead><tr><th scope="col">Field</th><th scope="col">Value</th><th scope="col">Set by</th><th scope="col">Overrides</th></tr></thead>
    <tbody>
      ${section.fields.map(
        (field) => html`<tr class=${field.refused.length + field.unresolved.length > 0 ? 'bad' : ''}>
          <th scope="row" class="field">${field.field}</th>
          <td><code>${JSON.stringify(field.value)}</code>
            ${field.refused.map((r) => html`<p class="error">REFUSED by the data plane (the traffic it covers is answered 500): ${r.path}: ${r.reason}</p>`)}
            ${field.unresolved.map((u) => html`<p class="error">UNRESOLVED (InvalidCredentialRef): ${u}</p>`)}
          </td>
          <td>${provenance(field.setBy)}</td>
          <td>${field.overrides.map((o) => html`<div class="overridden">${provenance(o)}</div>`)}</td>
        </tr>`,
      )}
    </tbody>
  </table>`;
}

function Explanation({ what, namespace, name, section }) {
  const query = new URLSearchParams({ what, namespace, name });
  if (section) query.set('section', section);
  const state = useApi(`explain?${query}`);
  if (!state.data) return html`<${Pending} state=${state} />`;
  const explanation = state.data;
  if (explanation.what === 'backend')
    return html`<div class="card">${explanation.sections.map((s) => html`<${Section} section=${s} />`)}</div>`;
  if (explanation.placements.length === 0)
    return html`<p class="muted">HTTPRoute ${explanation.key} is not attached to any gw Gateway (see its status).</p>`;
  return explanation.placements.map(
    (placement) => html`<div class="card">
      <h3>${placement.heading}</h3>
      ${placement.sections.map((s) => html`<${Section} section=${s} />`)}
    </div>`,
  );
}

function Route({ route, chosenRule }) {
  const base = `/ui/routes?route=${encodeURIComponent(`${route.namespace}/${route.name}`)}`;
  return html`<section class="card" aria-labelledby="route-title">
    <h2 id="route-title"><${ObjectLink} object=${route} /></h2>
    ${route.hostnames.length > 0 && html`<p>Hostnames: ${route.hostnames.join(', ')}</p>`}
    <table>
      <caption>Rules</caption>
      <thead><tr><th scope="col">Rule</th><th scope="col">Matches</th><th scope="col">Backends</th><th scope="col">Filters</th></tr></thead>
      <tbody>
        ${route.rules.map(
          (rule) => html`<tr>
            <th scope="row">${rule.name ? html`<${Link} href=${`${base}&rule=${encodeURIComponent(rule.name)}`} aria-current=${rule.name === chosenRule ? 'true' : undefined}>${rule.name}<//>` : `#${rule.index}`}</th>
            <td><ul>${rule.matches.map((m) => html`<li>${matchText(m)}</li>`)}</ul></td>
            <td><ul>${rule.backendRefs.map((b) => html`<li>${b.kind} ${b.namespace}/${b.name}${b.port ? `:${b.port}` : ''} (weight ${b.weight})</li>`)}</ul></td>
            <td>${rule.filters.join(', ') || '—'}</td>
          </tr>`,
        )}
      </tbody>
    </table>
    ${route.parents.map((parent) => html`<${Conditions} conditions=${parent.conditions} caption=${`${parent.role} ${parent.ref.kind ?? 'Gateway'} ${parent.ref.namespace ? `${parent.ref.namespace}/` : ''}${parent.ref.name}`} />`)}
    <h2>Effective policy${chosenRule ? ` of rule ${chosenRule}` : ''}</h2>
    ${chosenRule && html`<p><${Link} href=${base}>Whole route<//></p>`}
    <${Explanation} what="route" namespace=${route.namespace} name=${route.name} section=${chosenRule} />
  </section>`;
}

export default function Routes({ query }) {
  const state = useApi('routes');
  if (!state.data) return html`<h1>Routes & backends</h1><${Pending} state=${state} />`;
  const { routes, backends } = state.data;
  const chosenRoute = query.get('route');
  const chosenBackend = query.get('backend');
  const route = routes.find((r) => `${r.namespace}/${r.name}` === chosenRoute);
  const backend = backends.find((b) => `${b.namespace}/${b.name}` === chosenBackend);
  return html`
    <h1>Routes & backends</h1>
    <div class="columns">
      <nav aria-label="Routes and backends" class="side">
        <h2>Routes (${routes.length})</h2>
        <ul>${routes.map((r) => html`<li><${Link} href=${`/ui/routes?route=${encodeURIComponent(`${r.namespace}/${r.name}`)}`} aria-current=${r === route ? 'page' : undefined}>${r.namespace}/${r.name}<//></li>`)}</ul>
        <h2>Backends (${backends.length})</h2>
        <ul>${backends.map((b) => html`<li><${Link} href=${`/ui/routes?backend=${encodeURIComponent(`${b.namespace}/${b.name}`)}`} aria-current=${b === backend ? 'page' : undefined}>${b.kind} ${b.namespace}/${b.name}<//></li>`)}</ul>
      </nav>
      <div class="detail">
        ${route && html`<${Route} key=${chosenRoute} route=${route} chosenRule=${query.get('rule') ?? undefined} />`}
        ${
          backend &&
          html`<section aria-labelledby="backend-title">
          <h2 id="backend-title"><${ObjectLink} object=${backend} /></h2>
          <h3>Effective policy</h3>
          <${Explanation} key=${chosenBackend} what="backend" namespace=${backend.namespace} name=${backend.name} section=${query.get('section') ?? undefined} />
        </section>`
        }
        ${!route && !backend && html`<p class="muted">Choose a route or a backend to see its effective policy.</p>`}
      </div>
    </div>`;
}
