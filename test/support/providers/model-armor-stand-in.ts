// A stand-in for Google Cloud Model Armor's REST API on 127.0.0.1, in its wire format (proto3
// JSON, camelCase; enums as names, or as numbers when the client asks with
// `$alt=json;enum-encoding=int` as Google's REST clients do; int64 as strings; errors as
// {"error": {code, message, status}}):
//   POST /v1/projects/{project}/locations/{location}/templates/{template}:sanitizeUserPrompt
//        {"userPromptData": {"text"}}  → {"sanitizationResult": {...}}
//   POST …:sanitizeModelResponse {"modelResponseData": {"text"}, "userPrompt"?} → the same
// Only a Bearer token `accepts` approves gets in (401 UNAUTHENTICATED otherwise). Templates are
// configured by the test; their filters are deterministic:
//   rai            dangerous when the text says "bomb", harassment when it says "idiot";
//   pi_and_jailbreak  "ignore previous instructions" (or "ignore all previous instructions");
//   malicious_uris  a URL whose host contains "malware";
//   csam           never matches;
//   sdp            e-mail addresses and US social security numbers: found (inspect), or replaced
//                  by [EMAIL_ADDRESS] / [US_SOCIAL_SECURITY_NUMBER] (deidentify), per template.
// A template can skip filters (invocationResult PARTIAL: pi_and_jailbreak skipped; FAILURE: all
// skipped) and pass ignorePartialInvocationFailures through its sanitization metadata, as Google
// does, or answer every call 503 UNAVAILABLE.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { closeServer, listen, readBody, sendJson } from '../../helpers/http-server.ts';

export interface ModelArmorTemplate {
  /** The Sensitive Data Protection filter: inspect (basic) or deidentify (advanced, with a de-identify template). */
  sdp?: 'inspect' | 'deidentify';
  /** Filters the template could not run. */
  invocation?: 'PARTIAL' | 'FAILURE';
  /** The template metadata's ignore_partial_invocation_failures, passed through. */
  ignorePartialInvocationFailures?: boolean;
  /** Every call answers 503 UNAVAILABLE (a service in trouble). */
  unavailable?: boolean;
}

export interface SanitizeCall {
  method: 'sanitizeUserPrompt' | 'sanitizeModelResponse';
  /** The request target as received (path and query). */
  url: string;
  project: string;
  location: string;
  template: string;
  text: string;
  headers: IncomingHttpHeaders;
}

export interface ModelArmorStandIn {
  port: number;
  /** http://127.0.0.1:<port>/ (what CLOUDSDK_API_ENDPOINT_OVERRIDES_MODELARMOR takes). */
  url: string;
  calls: SanitizeCall[];
  close(): Promise<void>;
}

const PATH =
  /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/templates\/([^/:]+):(sanitizeUserPrompt|sanitizeModelResponse)$/;

const BODY_FIELDS = {
  sanitizeUserPrompt: { data: 'userPromptData', allowed: ['userPromptData', 'multiLanguageDetectionMetadata'] },
  sanitizeModelResponse: {
    data: 'modelResponseData',
    allowed: ['modelResponseData', 'userPrompt', 'multiLanguageDetectionMetadata'],
  },
} as const;

// The enums of the answer by field name, with their proto numbers (for enum-encoding=int).
const ENUMS: Record<string, Record<string, number>> = {
  filterMatchState: { NO_MATCH_FOUND: 1, MATCH_FOUND: 2 },
  matchState: { NO_MATCH_FOUND: 1, MATCH_FOUND: 2 },
  executionState: { EXECUTION_SUCCESS: 1, EXECUTION_SKIPPED: 2 },
  invocationResult: { SUCCESS: 1, PARTIAL: 2, FAILURE: 3 },
  confidenceLevel: { LOW_AND_ABOVE: 1, MEDIUM_AND_ABOVE: 2, HIGH: 3 },
  likelihood: { VERY_UNLIKELY: 1, UNLIKELY: 2, POSSIBLE: 3, LIKELY: 4, VERY_LIKELY: 5 },
  messageType: { INFO: 1, WARNING: 2, ERROR: 3 },
};

function enumsAsNumbers(value: unknown, field = ''): unknown {
  if (Array.isArray(value)) return value.map((each) => enumsAsNumbers(each, field));
  if (typeof value === 'string') return ENUMS[field]?.[value] ?? value;
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([key, each]) => [key, enumsAsNumbers(each, key)]));
}

const INFO_TYPES: [string, RegExp][] = [
  ['EMAIL_ADDRESS', /[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/g],
  ['US_SOCIAL_SECURITY_NUMBER', /\b\d{3}-\d{2}-\d{4}\b/g],
];

type Json = Record<string, unknown>;
const state = (found: boolean) => (found ? 'MATCH_FOUND' : 'NO_MATCH_FOUND');
const ran = { executionState: 'EXECUTION_SUCCESS' };
const skipped = {
  executionState: 'EXECUTION_SKIPPED',
  messageItems: [{ messageType: 'WARNING', message: 'The filter was skipped.' }],
};

function raiResult(text: string): Json {
  const types: Record<string, boolean> = {
    sexually_explicit: false,
    hate_speech: false,
    harassment: /\bidiot\b/i.test(text),
    dangerous: /\bbomb\b/i.test(text),
  };
  const any = Object.values(types).some(Boolean);
  return {
    raiFilterResult: {
      ...ran,
      matchState: state(any),
      raiFilterTypeResults: Object.fromEntries(
        Object.entries(types).map(([type, found]) => [
          type,
          found ? { confidenceLevel: 'HIGH', matchState: state(true) } : { matchState: state(false) },
        ]),
      ),
    },
  };
}

function sdpResult(text: string, mode: 'inspect' | 'deidentify'): Json {
  const findings: { infoType: string; start: number; end: number }[] = [];
  for (const [infoType, pattern] of INFO_TYPES)
    for (const match of text.matchAll(pattern))
      findings.push({ infoType, start: match.index, end: match.index + match[0].length });
  findings.sort((a, b) => a.start - b.start);
  if (mode === 'inspect')
    return {
      sdpFilterResult: {
        inspectResult: {
          ...ran,
          matchState: state(findings.length > 0),
          findings: findings.map(({ infoType, start, end }) => ({
            infoType,
            likelihood: 'LIKELY',
            location: {
              byteRange: {
                start: String(Buffer.byteLength(text.slice(0, start))),
                end: String(Buffer.byteLength(text.slice(0, end))),
              },
              codepointRange: {
                start: String([...text.slice(0, start)].length),
                end: String([...text.slice(0, end)].length),
              },
            },
          })),
        },
      },
    };
  let deidentified = '';
  let from = 0;
  for (const { infoType, start, end } of findings) {
    deidentified += `${text.slice(from, start)}[${infoType}]`;
    from = end;
  }
  deidentified += text.slice(from);
  const deidentifyResult: Json = { ...ran, matchState: state(findings.length > 0) };
  if (findings.length > 0) {
    deidentifyResult.data = { text: deidentified };
    deidentifyResult.transformedBytes = String(
      findings.reduce((sum, { start, end }) => sum + Buffer.byteLength(text.slice(start, end)), 0),
    );
    deidentifyResult.infoTypes = [...new Set(findings.map((finding) => finding.infoType))];
  }
  return { sdpFilterResult: { deidentifyResult } };
}

/** The sanitizationResult of `text` under `template`. */
function sanitize(text: string, template: ModelArmorTemplate): Json {
  const filters: Record<string, { skip: boolean; result: () => Json }> = {
    csam: { skip: false, result: () => ({ csamFilterFilterResult: { ...ran, matchState: state(false) } }) },
    malicious_uris: {
      skip: false,
      result: () => {
        const uris = [...text.matchAll(/https?:\/\/[^\s/]*malware[^\s]*/g)];
        return {
          maliciousUriFilterResult: {
            ...ran,
            matchState: state(uris.length > 0),
            ...(uris.length > 0 && {
              maliciousUriMatchedItems: uris.map((match) => ({
                uri: match[0],
                locations: [{ start: String(match.index), end: String(match.index + match[0].length) }],
              })),
            }),
          },
        };
      },
    },
    rai: { skip: false, result: () => raiResult(text) },
    pi_and_jailbreak: {
      skip: template.invocation === 'PARTIAL',
      result: () => {
        const found = /ignore (all )?previous instructions/i.test(text);
        return {
          piAndJailbreakFilterResult: {
            ...ran,
            matchState: state(found),
            ...(found && { confidenceLevel: 'HIGH' }),
          },
        };
      },
    },
    ...(template.sdp !== undefined && {
      sdp: { skip: false, result: () => sdpResult(text, template.sdp!) },
    }),
  };
  const all = template.invocation === 'FAILURE';
  const filterResults: Json = {};
  let anyMatch = false;
  for (const [name, filter] of Object.entries(filters)) {
    if (all || filter.skip) {
      const field = Object.keys(filter.result())[0]!;
      filterResults[name] =
        field === 'sdpFilterResult' ? { [field]: { inspectResult: skipped } } : { [field]: skipped };
      continue;
    }
    const result = filter.result();
    filterResults[name] = result;
    const inner = Object.values(result)[0] as Json;
    const sdp = (inner.inspectResult ?? inner.deidentifyResult) as Json | undefined;
    if ((sdp ?? inner).matchState === 'MATCH_FOUND') anyMatch = true;
  }
  const sanitizationResult: Json = {
    filterMatchState: state(anyMatch),
    filterResults,
    invocationResult: template.invocation ?? 'SUCCESS',
  };
  if (template.ignorePartialInvocationFailures !== undefined)
    sanitizationResult.sanitizationMetadata = {
      ignorePartialInvocationFailures: template.ignorePartialInvocationFailures,
    };
  return sanitizationResult;
}

/**
 * Model Armor with `templates` (by "project/location/template") taking the Bearer tokens `accepts` approves.
 */
export async function startModelArmorStandIn(
  templates: Record<string, ModelArmorTemplate>,
  accepts: (token: string) => boolean,
): Promise<ModelArmorStandIn> {
  const calls: SanitizeCall[] = [];
  const server = createServer(async (req, res) => {
    const body = await readBody(req);
    const fail = (code: number, status: string, message: string) =>
      sendJson(res, code, { error: { code, message, status } });
    const url = new URL(req.url ?? '/', 'http://stand-in');
    const match = PATH.exec(url.pathname);
    if (req.method !== 'POST' || match === null)
      return fail(404, 'NOT_FOUND', `The requested URL ${url.pathname} was not found.`);
    const token = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (token === undefined || !accepts(token))
      return fail(
        401,
        'UNAUTHENTICATED',
        'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.',
      );
    const [, project, location, templateId, method] = match as unknown as [
      string,
      string,
      string,
      string,
      SanitizeCall['method'],
    ];
    const template = templates[`${project}/${location}/${templateId}`];
    if (template === undefined)
      return fail(
        404,
        'NOT_FOUND',
        `Template projects/${project}/locations/${location}/templates/${templateId} not found.`,
      );
    let request: Json;
    try {
      request = JSON.parse(body) as Json;
    } catch {
      return fail(400, 'INVALID_ARGUMENT', 'Invalid JSON payload received.');
    }
    const { data, allowed } = BODY_FIELDS[method];
    const unknown = Object.keys(request).find((key) => !(allowed as readonly string[]).includes(key));
    if (unknown !== undefined)
      return fail(
        400,
        'INVALID_ARGUMENT',
        `Invalid JSON payload received. Unknown name "${unknown}": Cannot find field.`,
      );
    const text = (request[data] as Json | undefined)?.text;
    if (typeof text !== 'string') return fail(400, 'INVALID_ARGUMENT', `${data} is required and must hold text.`);
    calls.push({ method, url: req.url ?? '', project, location, template: templateId, text, headers: req.headers });
    if (template.unavailable) return fail(503, 'UNAVAILABLE', 'The service is currently unavailable.');
    const answer = { sanitizationResult: sanitize(text, template) };
    const asNumbers = (url.searchParams.get('$alt') ?? '').includes('enum-encoding=int');
    sendJson(res, 200, asNumbers ? enumsAsNumbers(answer) : answer);
  });
  const port = await listen(server);
  return { port, url: `http://127.0.0.1:${port}/`, calls, close: () => closeServer(server) };
}
