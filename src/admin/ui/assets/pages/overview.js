// Overview: the Gateways with their addresses and listeners (port, protocol, bound or why not,
// routes attached, conditions), then every problem the controller or the data plane reports, each
// linked to its object.
import { Conditions, ObjectLink, Pending, StatusBadge, useApi } from '../lib/components.js';
import { html } from '../lib/html.js';

function Listener({ listener }) {
  return html`<tr>
    <th scope="row">${listener.name}</th>
    <td>${listener.protocol}</td>
    <td>${listener.address ?? listener.port}${listener.hostname ? html` <span class="muted">(${listener.hostname})</span>` : ''}</td>
    <td>${listener.bound ? html`<${StatusBadge} ok=${true} text="bound" />` : html`<${StatusBadge} ok=${false} text="not bound" /> ${listener.bindProblem ?? ''}`}</td>
    <td>${listener.attachedRoutes}</td>
    <td>${listener.conditions.map((c) => html`<${StatusBadge} ok=${c.status === 'True' ? c.type !== 'Conflicted' : c.type === 'Conflicted'} text=${`${c.type}=${c.status}`} /> `)}</td>
  </tr>`;
}

function Gateway({ gateway }) {
  return html`<section class="card" aria-labelledby=${`gw-${gateway.namespace}-${gateway.name}`}>
    <h3 id=${`gw-${gateway.namespace}-${gateway.name}`}><${ObjectLink} object=${gateway} /></h3>
    <p>
      Class ${gateway.className ?? '—'} · ${gateway.served ? 'served by this gw' : 'not served by this gw'}
      ${gateway.addresses.length > 0 && html` · addresses ${gateway.addresses.join(', ')}`}
    </p>
    <${Conditions} conditions=${gateway.conditions} caption="Gateway conditions" />
    <table>
      <caption>Listeners</caption>
      <thead><tr><th scope="col">Listener</th><th scope="col">Protocol</th><th scope="col">Address</th><th scope="col">Port bound</th><th scope="col">Routes</th><th scope="col">Conditions</th></tr></thead>
      <tbody>${gateway.listeners.map((l) => html`<${Listener} key=${l.name} listener=${l} />`)}</tbody>
    </table>
  </section>`;
}

function Problem({ problem }) {
  return html`<li>
    ${problem.object ? html`<${ObjectLink} object=${problem.object} />` : html`<span>${problem.source}</span>`}
    ${problem.where && html` <span class="muted">${problem.where}</span>`}
    ${problem.type && html` <strong>${problem.type}</strong> (${problem.reason})`}: ${problem.message}
  </li>`;
}

export default function Overview() {
  const state = useApi('overview');
  if (!state.data) return html`<h1>Overview</h1><${Pending} state=${state} />`;
  const { gateways, problems } = state.data;
  return html`
    <h1>Overview</h1>
    <section aria-labelledby="problems-title">
      <h2 id="problems-title">Problems (${problems.length})</h2>
      ${problems.length === 0 ? html`<p class="ok-text">Nothing reported: every object is accepted and resolved.</p>` : html`<ul class="problems">${problems.map((p, i) => html`<${Problem} key=${i} problem=${p} />`)}</ul>`}
    </section>
    <section aria-labelledby="gateways-title">
      <h2 id="gateways-title">Gateways (${gateways.length})</h2>
      ${gateways.length === 0 && html`<p class="muted">No Gateway.</p>`}
      ${gateways.map((g) => html`<${Gateway} key=${`${g.namespace}/${g.name}`} gateway=${g} />`)}
    </section>`;
}
