// biome-ignore-all lint/performance/useDomNodeTextContent: these are Playwright Locator.innerText calls (the rendered text, table cells apart), not the DOM property
// The web UI in a real browser: Debian's headless Chromium driven by playwright-core against a gw
// serving its own API server with the example configuration (created through the UI's API, as the
// UI's editor creates objects). Each page renders the example's objects; an invalid edit shows its
// field path; the keyboard reaches the navigation, every control is labelled, the landmarks are
// there; the login is asked for when the admin listener is not loopback. A screenshot of each page
// goes to $GW_TEST_OUTPUT_DIR/ui (default: the system's temporary directory), its path printed.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { exampleConfiguration, startUiGateway, type UiGateway, yamlDocuments } from '../helpers/admin-ui.ts';
import { openBrowserPage, screenshot, skipWithoutChromium } from '../helpers/browser.ts';

const TOKEN = 'browser-test-admin-token-42';

/** Creates the example's objects in gw's API server: through the UI's API, the Secret as kubectl would. */
async function createExample(gw: UiGateway): Promise<void> {
  for (const yaml of yamlDocuments(await exampleConfiguration(gw.listenerPort, gw.modelsPort))) {
    if (/^kind: Secret$/m.test(yaml)) {
      const answer = await gw.gateway.api!.api.request('POST', '/api/v1/namespaces/default/secrets', {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'client-keys', namespace: 'default' },
        stringData: { 'team-a': 'key-for-team-a' },
      });
      assert.equal(answer.status, 201);
      continue;
    }
    const response = await fetch(`${gw.url}/ui/api/object`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gw-ui': '1' },
      body: JSON.stringify({ yaml }),
    });
    assert.equal(response.status, 201, `${yaml}\n${await response.text()}`);
  }
}

describe('web UI in headless Chromium', { skip: skipWithoutChromium }, () => {
  let gw: UiGateway;
  let browser: Browser;
  let page: Page;

  before(async () => {
    gw = await startUiGateway({ apiServer: true });
    await createExample(gw);
    ({ browser, page } = await openBrowserPage());
  });
  after(async () => {
    await browser?.close();
    await gw?.stop();
  });

  it('Overview shows the Gateways, their listeners with addresses, and links each to its object', async () => {
    await page.goto(`${gw.url}/`);
    await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
    // The Gateway list links each; its problems (if any have come in yet) link it again.
    await page.getByRole('link', { name: 'Gateway default/ai' }).first().waitFor();
    await page.getByRole('link', { name: 'Gateway default/models' }).first().waitFor();
    const text = await page.locator('main').innerText();
    assert.match(text, new RegExp(`127\\.0\\.0\\.1:${gw.listenerPort}`));
    assert.match(text, new RegExp(`127\\.0\\.0\\.1:${gw.modelsPort}`));
    assert.match(text, /gw API server \(editable\)|Problems \(\d+\)/);
    await screenshot(page, 'overview');
  });

  it('the keyboard reaches the navigation; landmarks are there; the current page is marked', async () => {
    await page.goto(`${gw.url}/ui/overview`);
    await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
    assert.equal(await page.getByRole('banner').count(), 1);
    assert.equal(await page.getByRole('main').count(), 1);
    assert.equal(await page.getByRole('navigation', { name: 'Pages' }).count(), 1);
    assert.equal(await page.getByRole('link', { name: 'Overview', exact: true }).getAttribute('aria-current'), 'page');
    // Tab from the top: the skip link, then the pages in order.
    const focused: string[] = [];
    for (let i = 0; i < 4; i++) {
      await page.keyboard.press('Tab');
      focused.push(await page.evaluate<string>("document.activeElement?.textContent?.trim() ?? ''"));
    }
    assert.deepEqual(focused, ['Skip to content', 'Overview', 'Routes & backends', 'Models']);
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Routes & backends', level: 1 }).waitFor();
    assert.equal(new URL(page.url()).pathname, '/ui/routes');
  });

  it("Routes & backends shows a route's matches and its effective policy as gw explain has it", async () => {
    await page.goto(`${gw.url}/ui/routes`);
    await page.getByRole('link', { name: 'default/llm' }).click();
    await page.getByRole('table', { name: 'traffic' }).waitFor();
    const rules = await page.getByRole('table', { name: 'Rules' }).innerText();
    assert.match(rules, /PathPrefix \/v1/);
    assert.match(rules, /GwBackend default\/demo-llm/);
    const timeouts = page.getByRole('table', { name: 'traffic' }).getByRole('row', { name: /timeouts/ });
    const row = await timeouts.innerText();
    assert.match(row, /GwPolicy default\/llm-route \(Route, on HTTPRoute default\/llm\)/);
    assert.match(row, /GwPolicy default\/gateway-defaults/);
    await screenshot(page, 'routes');
    await page.getByRole('link', { name: 'GwBackend default/demo-llm' }).click();
    await page.getByRole('heading', { name: 'Effective policy' }).waitFor();
    // The heading comes before the explanation's answer: wait for the answer.
    await page.getByText('Loading…').waitFor({ state: 'detached' });
    assert.match(await page.locator('main').innerText(), /GwPolicy default\/provider-timeouts/);
  });

  it("Models shows the discovery list and the virtual model's targets with their health", async () => {
    await page.goto(`${gw.url}/ui/models`);
    await page.getByRole('table', { name: 'Targets of default/smart' }).waitFor();
    const text = await page.locator('main').innerText();
    assert.match(text, /Discovery \(GET \/v1\/models\): primary-model smart/);
    const targets = await page.getByRole('table', { name: 'Targets of default/smart' }).innerText();
    assert.match(targets, /default\/primary\s+0\s+100\s+Healthy/);
    assert.match(targets, /default\/fallback\s+1\s+100\s+Healthy/);
    await screenshot(page, 'models');
  });

  it('Policies shows what each policy targets and its ancestor statuses', async () => {
    await page.goto(`${gw.url}/ui/policies`);
    await page.getByRole('heading', { name: 'Policies (4)' }).waitFor();
    for (const name of ['api-keys', 'gateway-defaults', 'llm-route', 'provider-timeouts'])
      await page.getByRole('link', { name: `GwPolicy default/${name}` }).waitFor();
    const llmRoute = await page.getByRole('region', { name: 'GwPolicy default/llm-route' }).innerText();
    assert.match(llmRoute, /HTTPRoute llm/);
    assert.match(llmRoute, /Ancestor Gateway default\/ai/);
    assert.match(llmRoute, /Accepted\s+True/);
    await screenshot(page, 'policies');
  });

  it('an invalid edit shows its field path; a valid one is saved; every control is labelled', async () => {
    await page.goto(`${gw.url}/ui/objects?kind=gw.dev/GwPolicy&namespace=default&name=llm-route`);
    const editor = page.getByLabel('Object (YAML)');
    await editor.waitFor();
    const yaml = await editor.inputValue();
    assert.match(yaml, /request: 300s/);
    await editor.fill(yaml.replace('request: 300s', 'request: soon'));
    await page.getByRole('button', { name: 'Save' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    assert.match(await alert.innerText(), /spec\.traffic\.timeouts\.request/);
    await screenshot(page, 'objects-invalid-edit');
    await editor.fill(yaml.replace('request: 300s', 'request: 200s'));
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').waitFor();
    const stored = await gw.gateway.api!.api.request(
      'GET',
      '/apis/gw.dev/v1alpha1/namespaces/default/gwpolicies/llm-route',
    );
    assert.equal(
      (stored.body as { spec: { traffic: { timeouts: { request: string } } } }).spec.traffic.timeouts.request,
      '200s',
    );
    // (A string: the test's TypeScript has no DOM types.)
    const unlabelled = await page.evaluate<string[]>(
      "[...document.querySelectorAll('input, textarea, select')].filter((e) => e.labels.length === 0 && !e.getAttribute('aria-label')).map((e) => e.outerHTML)",
    );
    assert.deepEqual(unlabelled, []);
  });

  it('asks for the admin token when the admin listener is not loopback', async () => {
    const guarded = await startUiGateway({ adminAddress: '0.0.0.0', token: TOKEN });
    const context = await browser.newContext();
    try {
      const login = await context.newPage();
      await login.goto(`${guarded.url}/ui/`);
      await login.getByLabel('Admin token').fill('not the token at all');
      await login.getByRole('button', { name: 'Log in' }).click();
      await login.getByRole('alert').waitFor();
      await screenshot(login, 'login');
      await login.getByLabel('Admin token').fill(TOKEN);
      await login.getByRole('button', { name: 'Log in' }).click();
      await login.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
      const cookies = await context.cookies();
      assert.equal(cookies.length, 1);
      assert.deepEqual([cookies[0]!.httpOnly, cookies[0]!.sameSite], [true, 'Strict']);
    } finally {
      await context.close();
      await guarded.stop();
    }
  });
});
