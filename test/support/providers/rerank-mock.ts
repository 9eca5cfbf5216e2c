// A stand-in for a rerank API on loopback, in Cohere's wire format (POST /v2/rerank and the
// OpenAI-compatible servers' /v1/rerank): a Bearer key, a body {model, query, documents, top_n?,
// return_documents?}, and the answer {id, results: [{index, relevance_score, document?}], meta}
// ordered by relevance (here: the share of the query's words a document contains). Errors are
// Cohere's `{"message": ...}`. Every request is recorded for the test to inspect.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RerankRequestSeen {
  path: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
}

export interface RerankMock {
  port: number;
  url: string;
  requests: RerankRequestSeen[];
  close(): Promise<void>;
}

function words(text: string): string[] {
  return text.toLowerCase().match(/[a-z0-9]+/g) ?? [];
}

/** How relevant `text` is to `query`, as every rerank stand-in scores it: the share of the query's words it contains. */
export function relevanceOf(query: string, text: string): number {
  const wanted = new Set(words(query));
  const found = words(text).filter((word) => wanted.has(word)).length;
  return found / Math.max(wanted.size, 1);
}

function documentText(document: unknown): string {
  if (typeof document === 'string') return document;
  if (document !== null && typeof document === 'object' && typeof (document as { text?: unknown }).text === 'string')
    return (document as { text: string }).text;
  return '';
}

/** A rerank server requiring `apiKey`, answering at `paths`. */
export async function startRerankMock(apiKey: string, paths: readonly string[]): Promise<RerankMock> {
  const requests: RerankRequestSeen[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const reply = (status: number, body: unknown) => {
        const text = JSON.stringify(body);
        res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
        res.end(text);
      };
      const path = (req.url ?? '').split('?')[0]!;
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      } catch {
        return reply(400, { message: 'invalid request: body is not JSON' });
      }
      requests.push({ path, headers: req.headers, body });
      if (req.method !== 'POST' || !paths.includes(path)) return reply(404, { message: `no route for ${path}` });
      if (req.headers.authorization !== `Bearer ${apiKey}`) return reply(401, { message: 'invalid api token' });
      const { query, documents, top_n: topN, return_documents: returnDocuments } = body;
      if (typeof body.model !== 'string') return reply(400, { message: 'invalid request: model is required' });
      if (typeof query !== 'string' || !Array.isArray(documents) || documents.length === 0)
        return reply(400, { message: 'invalid request: query and documents are required' });
      const results = documents
        .map((document, index) => {
          const result: Record<string, unknown> = {
            index,
            relevance_score: relevanceOf(query, documentText(document)),
          };
          if (returnDocuments === true) result.document = { text: documentText(document) };
          return result;
        })
        .sort((a, b) => (b.relevance_score as number) - (a.relevance_score as number))
        .slice(0, typeof topN === 'number' ? topN : documents.length);
      const inputTokens =
        words(query).length + documents.reduce((n: number, d) => n + words(documentText(d)).length, 0);
      reply(200, {
        id: `rerank-${requests.length}`,
        results,
        meta: {
          api_version: { version: '2' },
          billed_units: { search_units: 1 },
          tokens: { input_tokens: inputTokens, output_tokens: 0 },
        },
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
