// The model cost catalog with gw run's embedded API server (as a proxy reads a cluster): the
// catalog ConfigMap and the GwParameters are created through the API, the openai SDK's request
// through gw is priced, a ConfigMap patched through the API reprices the next request, and the
// GwParameters' ModelCatalogResolved condition is written back to the API server.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import OpenAI from 'openai';
import { Telemetry } from '../../src/dataplane/telemetry/request-telemetry.ts';
import { LocalGateway } from '../../src/run/local-gateway.ts';
import { aiBackendYaml, freePort, llmRouteYaml, pricedGatewayYaml } from '../helpers/gateway.ts';
import { startScriptedProvider } from '../helpers/scripted-provider.ts';
import { eventually } from '../helpers/until.ts';
import { apiClient, createAll } from './helpers.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'gw-catalog-api-'));
after(() => rmSync(dataDir, { recursive: true, force: true }));

const CONFIG_MAP = '/api/v1/namespaces/default/configmaps/prices';
const PARAMETERS = '/apis/gw.dev/v1alpha1/namespaces/default/gwparameters/priced';

test('a catalog created and changed through the API prices requests; its condition is written back', async () => {
  const provider = await startScriptedProvider();
  const port = await freePort();
  const accessLog: string[] = [];
  const gateway = new LocalGateway({
    paths: [],
    address: '127.0.0.1',
    api: { dataDir, port: 0 },
    telemetry: new Telemetry({ sink: { write: (line) => accessLog.push(line) } }),
  });
  await gateway.start();
  try {
    const client = apiClient(dataDir, gateway.api!.api.server.address.port);
    await createAll(
      client,
      `${pricedGatewayYaml(port, {
        catalog: { providers: { openai: { models: { 'gpt-4o': { rates: { input: '1', output: '2' } } } } } },
      })}${aiBackendYaml('openai', provider.port, 'alpha: {}', 'sk-upstream', undefined)}${llmRouteYaml(['openai'])}`,
    );
    const openai = new OpenAI({ apiKey: 'client', baseURL: `http://127.0.0.1:${port}/openai/v1`, maxRetries: 0 });
    const lastCost = () => {
      const line = accessLog.findLast((entry) => entry.includes('/openai/v1/chat/completions'));
      return line === undefined ? undefined : (JSON.parse(line) as Record<string, unknown>)['gw.ai.usage.cost.total'];
    };
    const costOfNext = async () => {
      const before = accessLog.length;
      await openai.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
      await eventually('the access log line', async () => accessLog.length > before);
      return lastCost();
    };
    // 11 input × 1 + 7 output × 2 (the reasoning tokens at the output rate), per million tokens.
    await eventually('the request is priced', async () => (await costOfNext().catch(() => undefined)) === 0.000025);
    await eventually('the condition is written to the API server', async () => {
      const conditions = (await client.request('GET', PARAMETERS)).json.status?.conditions ?? [];
      return conditions.some(
        (c: { type: string; status: string; message: string }) =>
          c.type === 'ModelCatalogResolved' && c.status === 'True' && c.message.includes('ConfigMap default/prices'),
      );
    });
    const patched = await client.request('PATCH', CONFIG_MAP, {
      body: {
        data: {
          'catalog.json': '{"providers": {"openai": {"models": {"gpt-4o": {"rates": {"input": "3", "output": "2"}}}}}}',
        },
      },
      contentType: 'application/merge-patch+json',
    });
    assert.equal(patched.status, 200, patched.text);
    await eventually('the next request is repriced', async () => (await costOfNext()) === 0.000047);
  } finally {
    await gateway.stop();
    await provider.close();
  }
});
