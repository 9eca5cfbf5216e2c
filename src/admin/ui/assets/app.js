// The shell: the header, the navigation built from PAGES, the login when the admin token is
// required, and the page the URL names (/ui/<page>), loaded as its module when first shown.
// Navigation inside the UI changes the URL without reloading; the back button works.
import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, onLoginNeeded } from './lib/api.js';
import { Link, useSubmit } from './lib/components.js';
import { html } from './lib/html.js';
import { PAGES } from './pages.js';

const loaded = new Map();

function currentPage() {
  const path = location.pathname.replace(/^\/ui\/?/, '').split('/')[0];
  return PAGES.find((page) => page.path === path) ?? (path === '' ? PAGES[0] : undefined);
}

function useLocation() {
  const [href, setHref] = useState(location.href);
  useEffect(() => {
    const update = () => setHref(location.href);
    addEventListener('popstate', update);
    addEventListener('gw:navigate', update);
    return () => {
      removeEventListener('popstate', update);
      removeEventListener('gw:navigate', update);
    };
  }, []);
  return new URL(href);
}

function Login({ onLogin }) {
  const { submit, busy, error } = useSubmit(
    (form) => api('session', { method: 'POST', body: { token: new FormData(form).get('token') } }),
    onLogin,
  );
  return html`<main id="main" class="login">
    <h1>gw</h1>
    <form onSubmit=${submit} aria-describedby="login-help">
      <p id="login-help">This gw's admin listener is reachable from the network: give the admin token (the content of --admin-token-file or GW_ADMIN_TOKEN).</p>
      <label for="token">Admin token</label>
      <input id="token" name="token" type="password" autocomplete="current-password" required autofocus />
      <button type="submit" disabled=${busy}>Log in</button>
      ${error && html`<p class="error" role="alert">${error.message}</p>`}
    </form>
  </main>`;
}

function PageView({ page, url, session }) {
  const [module, setModule] = useState(() => loaded.get(page.module));
  const [error, setError] = useState();
  useEffect(() => {
    if (loaded.has(page.module)) {
      setModule(loaded.get(page.module));
      return;
    }
    setModule(undefined);
    import(page.module).then(
      (imported) => {
        loaded.set(page.module, imported);
        setModule(imported);
      },
      (failure) => setError(failure.message),
    );
  }, [page.module]);
  if (error) return html`<p class="error" role="alert">This page could not be loaded: ${error}</p>`;
  if (!module) return html`<p class="loading">Loading…</p>`;
  const Page = module.default;
  return html`<${Page} query=${url.searchParams} session=${session} />`;
}

function App() {
  const url = useLocation();
  const [session, setSession] = useState();
  const main = useRef();
  const refresh = () => api('session').then(setSession, (error) => setSession({ error: error.message }));
  useEffect(() => {
    refresh();
    return onLoginNeeded(() => setSession((s) => ({ ...s, authenticated: false })));
  }, []);
  const page = currentPage();
  useEffect(() => {
    document.title = page ? `${page.title} · gw` : 'gw';
    // After navigating, the page's content is where keyboard and screen-reader users continue.
    if (main.current && document.activeElement?.closest?.('nav')) main.current.focus();
  }, [url.pathname]);
  if (!session) return html`<p class="loading">Loading…</p>`;
  if (session.error) return html`<main id="main"><p class="error" role="alert">${session.error}</p></main>`;
  if (!session.authenticated) return html`<${Login} onLogin=${refresh} />`;
  const logout = async () => {
    await api('session', { method: 'DELETE' });
    refresh();
  };
  return html`
    <a class="skip" href="#main">Skip to content</a>
    <header class="top">
      <span class="brand">gw</span>
      <nav aria-label="Pages">
        <ul>
          ${PAGES.map(
            (p) =>
              html`<li><${Link} href=${`/ui/${p.path}`} aria-current=${p === page ? 'page' : undefined}>${p.title}<//></li>`,
          )}
        </ul>
      </nav>
      <span class="source" title=${session.readOnlyBecause ?? 'objects are edited here and with kubectl'}>
        ${session.editable ? 'gw API server (editable)' : `${session.source} (read-only)`}
      </span>
      ${session.tokenRequired && html`<button type="button" class="link" onClick=${logout}>Log out</button>`}
    </header>
    <main id="main" tabindex="-1" ref=${main}>
      ${page ? html`<${PageView} key=${page.path} page=${page} url=${url} session=${session} />` : html`<h1>Not found</h1><p>No page ${url.pathname}.</p>`}
    </main>`;
}

render(html`<${App} />`, document.getElementById('app'));
