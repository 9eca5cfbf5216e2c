// The UI's calls to its JSON API (/ui/api/...). Every call sends the UI's own header (which the
// server requires of a change: a cross-site page cannot send it) and the session cookie; a 401
// tells the shell to show the login.
const UI_HEADER = 'x-gw-ui';

export class ApiError extends Error {
  constructor(status, body) {
    super(body?.error ?? `HTTP ${status}`);
    this.status = status;
    this.body = body;
  }
}

const listeners = new Set();

/** Called with every 401 (the session ended or never was). */
export function onLoginNeeded(listener) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export async function api(path, { method = 'GET', body } = {}) {
  const response = await fetch(`/ui/api/${path}`, {
    method,
    credentials: 'same-origin',
    headers: { [UI_HEADER]: '1', ...(body !== undefined && { 'content-type': 'application/json' }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  let parsed;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    parsed = { error: text };
  }
  if (response.status === 401 && parsed?.login) for (const listener of listeners) listener();
  if (!response.ok) throw new ApiError(response.status, parsed);
  return parsed;
}

/** The query string of an object reference, for links and API calls. */
export function objectQuery(ref) {
  const query = new URLSearchParams({ kind: ref.kindKey, name: ref.name });
  if (ref.namespace) query.set('namespace', ref.namespace);
  return query.toString();
}
