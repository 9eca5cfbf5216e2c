// biome-ignore-all lint/performance/useDomNodeTextContent: these are Playwright Locator.innerText calls (the rendered text), not the DOM property
// The Traffic and Playground pages in a real browser: Debian's headless Chromium driven by
// playwright-core against gw in front of the scripted provider (an OpenAI-compatible stand-in)
// and an MCP server of the official SDK. The traffic page shows requests as they happen (and
// filters them), its charts draw; a playground chat streams through the stand-in; an MCP tool
// is listed and called; a CEL expression evaluates against a request picked on the traffic page.
// Screenshots go to $GW_TEST_OUTPUT_DIR/ui (default: the system's temporary directory), their
// paths printed.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { openBrowserPage, screenshot, skipWithoutChromium } from '../../helpers/browser.ts';
import { SCRIPTED_TEXT } from '../../helpers/scripted-provider.ts';
import { type LiveUi, type PlaygroundWorld, startPlaygroundWorld } from './live-helpers.ts';

describe('Traffic and Playground pages in headless Chromium', { skip: skipWithoutChromium }, () => {
  let world: PlaygroundWorld;
  let ui: LiveUi;
  let port: number;
  let browser: Browser;
  let page: Page;

  before(async () => {
    // The charts' series samples every 500 ms here (10 s in gw run).
    world = await startPlaygroundWorld(500);
    ({ ui, port } = world);
    ({ browser, page } = await openBrowserPage({ width: 1400, height: 1000 }));
  });

  after(async () => {
    await browser?.close();
    await world?.stop();
  });

  const chat = (model: string) =>
    fetch(`http://127.0.0.1:${port}/openai/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hello' }] }),
    }).then((response) => response.text());

  it('Traffic shows requests as they happen, filters them, and charts them', async () => {
    await page.goto(`${ui.base}/ui/traffic`);
    await page.getByRole('heading', { name: 'Traffic', level: 1 }).waitFor();
    await page.getByText('live', { exact: true }).waitFor();
    await chat('gpt-4o');
    await chat('gpt-4.1');
    await fetch(`http://127.0.0.1:${port}/v1/nowhere`).then((r) => r.text());
    const rows = page.locator('table.traffic tbody tr');
    await page.getByRole('cell', { name: 'POST /openai/v1/chat/completions' }).first().waitFor();
    await page.getByRole('cell', { name: 'gpt-4.1-2026-01-01' }).waitFor();
    assert.equal(await page.getByRole('cell', { name: 'POST /openai/v1/chat/completions' }).count(), 2);
    const first = await rows.first().innerText();
    assert.match(first, /\/v1\/nowhere/, 'newest first');
    // Token counts of the scripted answers (11 in, 7 out).
    assert.match(await rows.nth(1).innerText(), /\b11\b[\s\S]*\b7\b/);
    await page.getByLabel('Status').selectOption('2xx');
    // A locator, not waitForFunction: a predicate evaluated in the page is eval, which the UI's CSP refuses.
    await rows.filter({ hasText: '/v1/nowhere' }).waitFor({ state: 'hidden' });
    assert.equal(await page.getByRole('cell', { name: 'POST /openai/v1/chat/completions' }).count(), 2);
    // Still live under the filter: a new 2xx request appears, a new 4xx one does not.
    await chat('gpt-4o-mini');
    await page.getByRole('cell', { name: 'gpt-4o-mini-2026-01-01' }).waitFor();
    await page.getByLabel('Status').selectOption('');
    // The charts: the series samples every 500 ms here; a line appears once two samples differ.
    await page.locator('figure.chart polyline, figure.chart circle').first().waitFor({ timeout: 10_000 });
    await page.getByRole('img', { name: 'Requests and errors' }).waitFor();
    await screenshot(page, 'traffic');
  });

  it('a playground chat streams through the chosen listener and route', async () => {
    await page.getByRole('link', { name: 'Playground' }).click();
    await page.getByRole('heading', { name: 'Chat', level: 2 }).waitFor();
    assert.equal(await page.getByLabel('Path', { exact: true }).inputValue(), '/openai/v1/chat/completions');
    await page.getByLabel('Model').fill('gpt-4o');
    await page.getByLabel('Message').fill('Say hello');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByTestId('chat-usage').waitFor();
    assert.match(await page.getByTestId('chat-usage').innerText(), /^11 input tokens, 7 output tokens/);
    const transcript = await page.getByRole('list', { name: 'Conversation' }).innerText();
    assert.match(transcript, /user\s+Say hello/);
    assert.match(transcript, new RegExp(`assistant\\s+${SCRIPTED_TEXT}`));
    await screenshot(page, 'playground-chat');
  });

  it('an MCP route lists its tools and a tool call works', async () => {
    assert.equal(await page.getByLabel('MCP path').inputValue(), '/mcp');
    await page.getByRole('button', { name: 'List tools' }).click();
    await page.getByLabel(/^Tool/).waitFor();
    assert.deepEqual(await page.getByLabel(/^Tool/).locator('option').allInnerTexts(), ['echo', 'only-tools']);
    assert.equal(JSON.parse(await page.getByLabel('Arguments (JSON)').inputValue()).text, '');
    await page.getByLabel('Arguments (JSON)').fill('{"text": "from the browser"}');
    await page.getByRole('button', { name: 'Call' }).click();
    await page.getByTestId('mcp-result').waitFor();
    assert.equal(await page.getByTestId('mcp-result').innerText(), 'tools: from the browser');
    await screenshot(page, 'playground-mcp');
  });

  it('a CEL expression evaluates against a request picked on the traffic page', async () => {
    await page.getByRole('link', { name: 'Traffic' }).click();
    await page.getByRole('heading', { name: 'Traffic', level: 1 }).waitFor();
    const row = page.locator('table.traffic tbody tr', { hasText: 'gpt-4.1-2026-01-01' }).first();
    await row.waitFor();
    await row.getByRole('link', { name: /Evaluate CEL/ }).click();
    await page.getByRole('heading', { name: 'CEL against a recorded request' }).waitFor();
    await page
      .getByLabel('Expression')
      .fill('llm.requestModel + " " + string(llm.inputTokens) + " " + string(response.code)');
    await page.getByRole('button', { name: 'Evaluate' }).click();
    await page.getByTestId('cel-value').waitFor();
    assert.equal(JSON.parse(await page.getByTestId('cel-value').innerText()), 'gpt-4.1 11 200');
    await page.getByLabel('Expression').fill('request.path ==');
    await page.getByRole('button', { name: 'Evaluate' }).click();
    await page.locator('#cel [role="alert"]').waitFor();
    assert.match(await page.locator('#cel [role="alert"]').innerText(), /does not compile/);
    await screenshot(page, 'playground-cel');
  });
});
