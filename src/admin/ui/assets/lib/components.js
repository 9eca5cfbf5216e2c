// Pieces every page uses: a link that navigates inside the UI, the loading/error state of an API
// call, conditions as a table, an object's name as a link to its page.
import { useCallback, useEffect, useState } from 'preact/hooks';
import { api, objectQuery } from './api.js';
import { html } from './html.js';

/** Moves to a UI path without reloading (the shell listens for 'gw:navigate'). */
export function navigate(href) {
  history.pushState(null, '', href);
  dispatchEvent(new Event('gw:navigate'));
}

export function Link({ href, children, ...rest }) {
  const onClick = (event) => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(href);
  };
  return html`<a href=${href} onClick=${onClick} ...${rest}>${children}</a>`;
}

/**
 * A form's submit handler around an API call: { submit, busy, error }. `action(form)` makes the
 * call; its result goes to `onDone`, its failure (an ApiError) to `error`.
 */
export function useSubmit(action, onDone) {
  const [error, setError] = useState();
  const [busy, setBusy] = useState(false);
  const submit = async (event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      onDone(await action(event.target));
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  return { submit, busy, error };
}

/** An API GET's state: { data, error, loading, reload }. */
export function useApi(path) {
  const [state, setState] = useState({ loading: true });
  const load = useCallback(() => {
    let live = true;
    setState((previous) => ({ ...previous, loading: true }));
    api(path).then(
      (data) => live && setState({ data, loading: false }),
      (error) => live && setState({ error, loading: false }),
    );
    return () => {
      live = false;
    };
  }, [path]);
  useEffect(load, [load]);
  return { ...state, reload: load };
}

/** What an API GET shows before its data: loading, or its error. */
export function Pending({ state }) {
  if (state.error) return html`<p class="error" role="alert">Could not load: ${state.error.message}</p>`;
  return html`<p class="loading" aria-live="polite">Loading…</p>`;
}

export function objectHref(ref) {
  return `/ui/objects?${objectQuery(ref)}`;
}

export function ObjectLink({ object }) {
  const name = `${object.namespace ? `${object.namespace}/` : ''}${object.name}`;
  return html`<${Link} href=${objectHref(object)}>${object.kind} ${name}<//>`;
}

const TRUE_IS_A_PROBLEM = new Set(['Conflicted']);

export function conditionIsProblem(condition) {
  return TRUE_IS_A_PROBLEM.has(condition.type) ? condition.status === 'True' : condition.status !== 'True';
}

export function Conditions({ conditions, caption }) {
  if (!conditions || conditions.length === 0) return html`<p class="muted">No conditions.</p>`;
  return html`<table class="conditions">
    ${caption && html`<caption>${caption}</caption>`}
    <thead><tr><th scope="col">Type</th><th scope="col">Status</th><th scope="col">Reason</th><th scope="col">Message</th></tr></thead>
    <tbody>
      ${conditions.map(
        (c) => html`<tr class=${conditionIsProblem(c) ? 'bad' : 'good'}>
          <td>${c.type}</td><td><${StatusBadge} ok=${!conditionIsProblem(c)} text=${c.status} /></td><td>${c.reason}</td><td>${c.message}</td>
        </tr>`,
      )}
    </tbody>
  </table>`;
}

export function StatusBadge({ ok, text }) {
  return html`<span class=${`badge ${ok ? 'ok' : 'bad'}`}>${text}</span>`;
}
