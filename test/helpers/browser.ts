// Debian's headless Chromium driven by playwright-core, for the web UI's browser tests: where the
// browser is (CHROMIUM, else /usr/bin/chromium; missing in CI is a failure, test/helpers/missing-tool.ts),
// a page that collects every script error for the test to assert none, and screenshots written to
// $GW_TEST_OUTPUT_DIR/ui (default: the system's temporary directory) with their paths printed.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { type Browser, type BrowserContextOptions, chromium, type Page } from 'playwright-core';
import { skipWithoutTool } from './missing-tool.ts';

const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const OUTPUT = join(process.env.GW_TEST_OUTPUT_DIR ?? join(tmpdir(), 'gw-test-output'), 'ui');

/** The `skip` of a describe that needs the browser. */
export const skipWithoutChromium = skipWithoutTool(
  'chromium',
  existsSync(CHROMIUM) ? undefined : `no browser at ${CHROMIUM} (set CHROMIUM)`,
);

/**
 * The browser and one page; call in a `before`. The page's script errors and console errors are
 * collected, and an `after` of the calling suite asserts there were none.
 */
export async function openBrowserPage(
  viewport?: BrowserContextOptions['viewport'],
): Promise<{ browser: Browser; page: Page }> {
  // --no-sandbox: the tests may run as root (CI), where Chromium's sandbox refuses to start.
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  const page = await browser.newPage(viewport ? { viewport } : {});
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  after(() => assert.deepEqual(errors, [], 'no script error in the pages'));
  return { browser, page };
}

/** A full-page screenshot named `name`, its path printed with the test's output. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(OUTPUT, { recursive: true });
  const path = join(OUTPUT, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  process.stdout.write(`screenshot: ${path}\n`);
}
