// Objects: every object gw reads, by kind; one object (?kind=&namespace=&name=) with its status and
// its YAML. When gw serves its own API server the YAML can be edited and saved, the object
// deleted, and new objects created — through the same admission as kubectl; a refusal lists its
// field paths. Otherwise the page says why it is read-only.
import { useState } from 'preact/hooks';
import { api, objectQuery } from '../lib/api.js';
import { Conditions, Link, navigate, objectHref, Pending, useApi, useSubmit } from '../lib/components.js';
import { html } from '../lib/html.js';

function Refusal({ error }) {
  if (!error) return null;
  const causes = error.body?.causes ?? [];
  return html`<div class="error" role="alert">
    <p>${error.message}</p>
    ${causes.length > 0 && html`<ul class="causes">${causes.map((c) => html`<li><strong>${c.field ?? '(object)'}</strong>: ${c.message}</li>`)}</ul>`}
  </div>`;
}

function Editor({ initial, label, action, onDone, busyLabel }) {
  const [text, setText] = useState(initial);
  const { submit, busy, error } = useSubmit(() => action(text), onDone);
  return html`<form onSubmit=${submit}>
    <label for="object-yaml">${label}</label>
    <textarea id="object-yaml" spellcheck="false" value=${text} onInput=${(e) => setText(e.target.value)}></textarea>
    <${Refusal} error=${error} />
    <p><button type="submit" disabled=${busy}>${busy ? busyLabel : 'Save'}</button></p>
  </form>`;
}

function ObjectView({ query, session }) {
  const state = useApi(`object?${query}`);
  const [deleteError, setDeleteError] = useState();
  const [saved, setSaved] = useState(false);
  if (!state.data) return html`<${Pending} state=${state} />`;
  const { object, yaml, status, writable } = state.data;
  const title = `${object.kind} ${object.metadata.namespace ? `${object.metadata.namespace}/` : ''}${object.metadata.name}`;
  const remove = async () => {
    if (!confirm(`Delete ${title}?`)) return;
    try {
      await api(`object?${query}`, { method: 'DELETE' });
      navigate('/ui/objects');
    } catch (failure) {
      setDeleteError(failure);
    }
  };
  return html`<section aria-labelledby="object-title">
    <h2 id="object-title">${title}</h2>
    ${status && !status.hasStatus && html`<p class="muted">No status: not handled by gw, or no gw controller writes it.</p>`}
    ${status && status.conditions.length > 0 && html`<${Conditions} conditions=${status.conditions} caption="Conditions" />`}
    ${status?.listeners.map((l) => html`<${Conditions} conditions=${l.conditions} caption=${`Listener ${l.name} (${l.attachedRoutes} routes)`} />`)}
    ${status?.relations.map((r) => html`<${Conditions} conditions=${r.conditions} caption=${`${r.role} ${r.ref.kind ?? 'Gateway'} ${r.ref.namespace ? `${r.ref.namespace}/` : ''}${r.ref.name}${r.ref.sectionName ? ` ${r.ref.sectionName}` : ''}`} />`)}
    ${
      writable
        ? html`${saved && html`<p class="ok-text" role="status">Saved.</p>`}
          <${Editor} key=${yaml} initial=${yaml} label="Object (YAML)" busyLabel="Saving…"
            action=${(text) => api('object', { method: 'PUT', body: { yaml: text } })}
            onDone=${() => {
              setSaved(true);
              state.reload();
            }} />
          <p><button type="button" class="danger" onClick=${remove}>Delete ${object.kind}</button></p>
          <${Refusal} error=${deleteError} />`
        : html`<p class="muted">${session.editable ? 'Secrets are shown by their keys only and written with kubectl.' : `Read-only: ${session.readOnlyBecause}.`}</p>
          <pre aria-label="Object (YAML)">${yaml}</pre>`
    }
  </section>`;
}

const NEW_OBJECT = `apiVersion: gw.dev/v1alpha1
kind: GwPolicy
metadata:
  name: example
  namespace: default
spec:
  targetRefs:
    - group: gateway.networking.k8s.io
      kind: Gateway
      name: ai
  traffic:
    timeouts:
      request: 30s
`;

function Create() {
  return html`<section aria-labelledby="create-title" class="card">
    <h2 id="create-title">Create an object</h2>
    <${Editor} initial=${NEW_OBJECT} label="New object (YAML)" busyLabel="Creating…"
      action=${(text) => api('object', { method: 'POST', body: { yaml: text } })}
      onDone=${(result) => navigate(objectHref({ kindKey: kindKeyOf(result.object), ...result.object.metadata, kind: result.object.kind }))} />
  </section>`;
}

function kindKeyOf(object) {
  const slash = object.apiVersion.indexOf('/');
  return `${slash < 0 ? '' : object.apiVersion.slice(0, slash)}/${object.kind}`;
}

export default function Objects({ query, session }) {
  const list = useApi('objects');
  const chosen =
    query.get('kind') && query.get('name')
      ? objectQuery({ kindKey: query.get('kind'), namespace: query.get('namespace'), name: query.get('name') })
      : undefined;
  const creating = query.get('new') !== null;
  if (!list.data) return html`<h1>Objects</h1><${Pending} state=${list} />`;
  const byKind = new Map();
  for (const object of list.data.objects) byKind.set(object.kind, [...(byKind.get(object.kind) ?? []), object]);
  return html`<h1>Objects</h1>
    <div class="columns">
      <nav aria-label="Objects" class="side">
        ${session.editable && html`<p><${Link} href="/ui/objects?new">Create an object<//></p>`}
        ${[...byKind].map(
          ([kind, objects]) => html`<h2>${kind} (${objects.length})</h2>
            <ul>${objects.map((o) => html`<li><${Link} href=${objectHref(o)} aria-current=${chosen === objectQuery(o) ? 'page' : undefined}>${o.namespace ? `${o.namespace}/` : ''}${o.name}<//></li>`)}</ul>`,
        )}
      </nav>
      <div class="detail">
        ${creating && session.editable && html`<${Create} />`}
        ${chosen && html`<${ObjectView} key=${chosen} query=${chosen} session=${session} />`}
        ${!chosen && !creating && html`<p class="muted">Choose an object.</p>`}
      </div>
    </div>`;
}
