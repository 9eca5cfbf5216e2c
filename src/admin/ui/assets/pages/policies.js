// Policies: each GwPolicy, what it targets, the sections it sets, and its statuses per ancestor.
import { Conditions, ObjectLink, Pending, useApi } from '../lib/components.js';
import { html } from '../lib/html.js';

function targetText(ref) {
  return `${ref.kind} ${ref.name}${ref.sectionName ? ` (section ${ref.sectionName})` : ''}`;
}

function Policy({ policy }) {
  const id = `policy-${policy.namespace}-${policy.name}`;
  return html`<section class="card" aria-labelledby=${id}>
    <h2 id=${id}><${ObjectLink} object=${policy} /></h2>
    <p>
      Targets: ${policy.targetRefs.map((r) => html`<span class="badge">${targetText(r)}</span> `)}
      ${policy.targetSelectors.map((s) => html`<span class="badge">${s.kind} selected by labels ${JSON.stringify(s.matchLabels ?? {})}</span> `)}
      ${policy.targetRefs.length + policy.targetSelectors.length === 0 && '—'}
    </p>
    <p>Sets: ${policy.sections.join(', ') || '—'}</p>
    ${policy.conditions.length > 0 && html`<${Conditions} conditions=${policy.conditions} caption="Conditions" />`}
    ${policy.ancestors.length === 0 && html`<p class="muted">No ancestor status: it takes effect nowhere yet.</p>`}
    ${policy.ancestors.map(
      (a) =>
        html`<${Conditions} conditions=${a.conditions} caption=${`Ancestor ${a.ref.kind ?? 'Gateway'} ${a.ref.namespace ? `${a.ref.namespace}/` : ''}${a.ref.name}${a.ref.sectionName ? ` ${a.ref.sectionName}` : ''}`} />`,
    )}
  </section>`;
}

export default function Policies() {
  const state = useApi('policies');
  if (!state.data) return html`<h1>Policies</h1><${Pending} state=${state} />`;
  const { policies } = state.data;
  return html`<h1>Policies (${policies.length})</h1>
    ${policies.length === 0 && html`<p class="muted">No GwPolicy.</p>`}
    ${policies.map((p) => html`<${Policy} key=${`${p.namespace}/${p.name}`} policy=${p} />`)}`;
}
