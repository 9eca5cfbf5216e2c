// A loopback stand-in for Amazon Bedrock Runtime's ApplyGuardrail
// (POST /guardrail/{guardrailIdentifier}/version/{guardrailVersion}/apply), in its wire format:
// the body {source: INPUT | OUTPUT, content: [{text: {text}}]}, the answer {usage, action:
// NONE | GUARDRAIL_INTERVENED, actionReason, outputs: [{text}], assessments: [...]}. Errors are
// AWS's {"message"} with x-amzn-errortype. Every request carries a SigV4 signature (service
// bedrock) recomputed with test/helpers/sigv4.ts (through aws-json-service.ts, as the Rerank
// stand-in does), or a Bedrock API key (Authorization: Bearer).
//
// Each guardrail it serves has policies a test sets, evaluated as Bedrock evaluates them: denied
// topics (a topic fires when a text holds one of its words), blocked custom words, and e-mail
// addresses (the PII entity EMAIL) either ANONYMIZED — each text's output is the text with every
// address as {EMAIL}, as Bedrock masks — or BLOCKED. A blocked text makes the one output the
// guardrail's blocked message for the source. `oneOutput` answers a masking with one output for
// all the texts, the way a guardrail answer that does not map onto the texts looks.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { sendAwsError, verifiedOrRefused } from '../../helpers/aws-json-service.ts';
import { closeServer, listen, readBody, sendJson } from '../../helpers/http-server.ts';
import type { Sigv4Secrets, Verified } from '../../helpers/sigv4.ts';

export interface StandInGuardrail {
  identifier: string;
  version: string;
  deniedTopics?: { name: string; words: string[] }[];
  blockedWords?: string[];
  emails?: 'ANONYMIZED' | 'BLOCKED';
  blockedInputMessage?: string;
  blockedOutputMessage?: string;
  oneOutput?: boolean;
}

export interface ApplyGuardrailCall {
  url: string;
  headers: IncomingHttpHeaders;
  identifier: string;
  version: string;
  body: { source: string; content: { text: { text: string } }[] };
  /** The SigV4 signature's details; undefined for a call made with an API key. */
  verified: Verified | undefined;
}

export interface BedrockGuardrailsStandIn {
  port: number;
  url: string;
  calls: ApplyGuardrailCall[];
  /** Requests refused for their credentials, with the reason. */
  refused: string[];
  close(): Promise<void>;
}

export interface BedrockGuardrailsOptions {
  guardrails: StandInGuardrail[];
  /** SigV4 access keys the stand-in knows. */
  secrets: Sigv4Secrets;
  /** Bedrock API keys it takes (Authorization: Bearer). */
  apiKeys?: string[];
}

const APPLY_PATH = /^\/guardrail\/([^/]+)\/version\/([^/]+)\/apply$/;
const EMAIL = /[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/g;

type Assessment = Record<string, unknown>;

/** What `guardrail` finds in one text: the assessment entries of each policy, and the text masked. */
function assess(guardrail: StandInGuardrail, text: string) {
  const lower = text.toLowerCase();
  const topics = (guardrail.deniedTopics ?? [])
    .filter((topic) => topic.words.some((word) => lower.includes(word.toLowerCase())))
    .map((topic) => ({ name: topic.name, type: 'DENY', action: 'BLOCKED', detected: true }));
  const customWords = (guardrail.blockedWords ?? [])
    .filter((word) => lower.includes(word.toLowerCase()))
    .map((word) => ({ match: word, action: 'BLOCKED', detected: true }));
  const emails = guardrail.emails === undefined ? [] : (text.match(EMAIL) ?? []);
  const piiEntities = emails.map((match) => ({ match, type: 'EMAIL', action: guardrail.emails, detected: true }));
  return { topics, customWords, piiEntities, masked: text.replace(EMAIL, '{EMAIL}') };
}

/** The ApplyGuardrail answer of `guardrail` to `texts` from `source`. */
function apply(guardrail: StandInGuardrail, source: string, texts: string[]): Record<string, unknown> {
  const found = texts.map((text) => assess(guardrail, text));
  const topics = found.flatMap((each) => each.topics);
  const customWords = found.flatMap((each) => each.customWords);
  const piiEntities = found.flatMap((each) => each.piiEntities);
  const assessment: Assessment = {};
  if (topics.length > 0) assessment.topicPolicy = { topics };
  if (customWords.length > 0) assessment.wordPolicy = { customWords, managedWordLists: [] };
  if (piiEntities.length > 0) assessment.sensitiveInformationPolicy = { piiEntities, regexes: [] };
  const usage = {
    topicPolicyUnits: guardrail.deniedTopics ? texts.length : 0,
    contentPolicyUnits: 0,
    wordPolicyUnits: guardrail.blockedWords ? texts.length : 0,
    sensitiveInformationPolicyUnits: guardrail.emails ? texts.length : 0,
    sensitiveInformationPolicyFreeUnits: 0,
    contextualGroundingPolicyUnits: 0,
  };
  const blocked = topics.length > 0 || customWords.length > 0 || piiEntities.some((e) => e.action === 'BLOCKED');
  if (blocked) {
    const message =
      source === 'INPUT'
        ? (guardrail.blockedInputMessage ?? 'Sorry, the model cannot answer this question.')
        : (guardrail.blockedOutputMessage ?? 'Sorry, the model cannot answer this question.');
    return {
      usage,
      action: 'GUARDRAIL_INTERVENED',
      actionReason: 'Guardrail blocked.',
      outputs: [{ text: message }],
      assessments: [assessment],
    };
  }
  if (piiEntities.length > 0) {
    const outputs = guardrail.oneOutput
      ? [{ text: found.map((each) => each.masked).join('\n') }]
      : found.map((each) => ({ text: each.masked }));
    return {
      usage,
      action: 'GUARDRAIL_INTERVENED',
      actionReason: 'Guardrail masked.',
      outputs,
      assessments: [assessment],
    };
  }
  return { usage, action: 'NONE', outputs: [], assessments: [] };
}

export async function startBedrockGuardrailsStandIn(
  options: BedrockGuardrailsOptions,
): Promise<BedrockGuardrailsStandIn> {
  const calls: ApplyGuardrailCall[] = [];
  const refused: string[] = [];
  const server = createServer(async (req, res) => {
    const text = await readBody(req);
    const fail = (status: number, type: string, message: string) => sendAwsError(res, status, type, message);
    const authorization = req.headers.authorization ?? '';
    let verified: Verified | undefined;
    if (authorization.startsWith('Bearer ')) {
      if (!(options.apiKeys ?? []).includes(authorization.slice('Bearer '.length))) {
        refused.push('unknown API key');
        return fail(403, 'AccessDeniedException', 'Authentication failed: Invalid API key.');
      }
    } else {
      verified = verifiedOrRefused(req, text, { secrets: options.secrets, service: 'bedrock' }, res, refused);
      if (verified === undefined) return;
    }
    const match = APPLY_PATH.exec(req.url ?? '');
    if (req.method !== 'POST' || match === null) return fail(404, 'UnknownOperationException', 'Unknown operation');
    const identifier = decodeURIComponent(match[1]!);
    const version = decodeURIComponent(match[2]!);
    const body = JSON.parse(text) as ApplyGuardrailCall['body'];
    calls.push({ url: req.url ?? '', headers: req.headers, identifier, version, body, verified });
    const guardrail = options.guardrails.find((each) => each.identifier === identifier && each.version === version);
    if (guardrail === undefined)
      return fail(404, 'ResourceNotFoundException', `The guardrail ${identifier} version ${version} was not found.`);
    if (body.source !== 'INPUT' && body.source !== 'OUTPUT')
      return fail(400, 'ValidationException', 'source must be INPUT or OUTPUT');
    if (!Array.isArray(body.content) || body.content.length === 0)
      return fail(400, 'ValidationException', 'content must hold at least one block');
    const texts: string[] = [];
    for (const block of body.content) {
      const value = block?.text?.text;
      if (typeof value !== 'string' || value === '')
        return fail(400, 'ValidationException', 'each content block must be a non-empty text block');
      texts.push(value);
    }
    sendJson(res, 200, apply(guardrail, body.source, texts));
  });
  const port = await listen(server);
  return { port, url: `http://127.0.0.1:${port}`, calls, refused, close: () => closeServer(server) };
}
