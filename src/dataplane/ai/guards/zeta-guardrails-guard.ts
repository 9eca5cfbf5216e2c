// The zetaGuardrails prompt guard: an Amazon Bedrock guardrail applied with Bedrock Runtime's
// ApplyGuardrail (POST /guardrail/{identifier}/version/{version}/apply), one text content block
// per text of the side (source INPUT for requests, OUTPUT for answers), signed with SigV4 for
// `bedrock` in the guard's region (the ambient AWS credentials unless the policies' auth says
// otherwise; a key is sent as a Bedrock API key, Authorization: Bearer). Reached at
// bedrock-runtime.{region}.amazonaws.com, or where AWS_ENDPOINT_URL_BEDROCK_RUNTIME, then
// AWS_ENDPOINT_URL, point (as the AWS SDKs read them, AWS_IGNORE_CONFIGURED_ENDPOINT_URLS too).
//
// The answer (decision 0034): action NONE passes; GUARDRAIL_INTERVENED with a policy that BLOCKED
// rejects, with the guard's CustomResponse; an intervention that only ANONYMIZED masks, with
// Bedrock's outputs as the texts' replacements when there is exactly one output per text sent;
// any other intervention rejects (an output Bedrock did not map onto the texts cannot be put back
// in their place, and letting the originals through would leak what the guardrail masked). What
// fired (topics, content filters, PII entities, regexes, word lists, grounding filters) goes to
// the access log by its type or name, never by the matched text.
import type { ZetaGuardrails } from '../../../api/types/ai.ts';
import { isPlainObject } from '../../../util/values.ts';
import { awsEndpointVariables, isServiceEndpointProblem, serviceEndpoint } from '../../upstream/service-endpoint.ts';
import { modelIdSegment, zetaHost } from '../providers/zeta.ts';
import { type Guard, type GuardCall, type GuardCompiler, GuardFailure, type GuardVerdict } from './guard.ts';
import { compileGuardService, type GuardService } from './service-call.ts';

// A region is a host-name label of Bedrock's endpoint: us-east-1, eu-central-2, us-gov-west-1.
const REGION = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

export const zetaGuardrailsGuard: GuardCompiler<ZetaGuardrails> = (config, path, input) => {
  if (!REGION.test(config.region))
    return {
      path: `${path}.region`,
      message: `"${config.region}" is not an AWS region (lower-case letters, digits and dashes, as in us-east-1); fix the region.`,
    };
  const endpoint = serviceEndpoint(`https://${zetaHost(config.region)}`, awsEndpointVariables('BEDROCK_RUNTIME'));
  if (isServiceEndpointProblem(endpoint)) return { path, message: endpoint.message };
  const name = `the Bedrock guardrail ${config.identifier} (version ${config.version}, ${config.region})`;
  const service = compileGuardService(
    {
      name,
      destination: endpoint.destination,
      basePath: endpoint.basePath,
      policies: config.policies,
      path,
      // agentgateway signs with the ambient AWS credentials when no auth is set; so does gw.
      defaultAuth: { cloudone: {} },
      target: { family: 'zeta', region: config.region },
      keyStyle: 'bearer',
    },
    input,
  );
  if (!('post' in service)) return service;
  const applyPath = `/guardrail/${modelIdSegment(config.identifier)}/version/${modelIdSegment(config.version)}/apply`;
  return new ZetaGuardrailsGuard(service, applyPath);
};

class ZetaGuardrailsGuard implements Guard {
  readonly kind = 'zetaGuardrails';
  // The managed services have no failure mode of their own: a guardrail that cannot answer refuses.
  readonly failureMode = 'FailClosed';
  readonly #service: GuardService;
  readonly #path: string;

  constructor(service: GuardService, path: string) {
    this.#service = service;
    this.#path = path;
  }

  async check(call: GuardCall): Promise<GuardVerdict> {
    // Bedrock takes no empty text block; an empty text has nothing to guard.
    const sent: number[] = [];
    for (let i = 0; i < call.texts.length; i++) if (call.texts[i]!.text !== '') sent.push(i);
    if (sent.length === 0) return { action: 'pass' };
    const answer = await this.#service.post({
      path: this.#path,
      body: {
        source: call.side === 'request' ? 'INPUT' : 'OUTPUT',
        content: sent.map((i) => ({ text: { text: call.texts[i]!.text } })),
      },
      headers: { accept: 'application/json' },
      incoming: { headers: call.headers, variables: call.variables },
      signal: call.signal,
    });
    return guardrailVerdict(answer, sent, call.texts.length, this.#service.name);
  }
}

/**
 * What an ApplyGuardrail answer means for the texts sent: `sent` holds their places among the
 * side's `count` texts (empty texts are not sent). Throws GuardFailure for an answer that is not
 * one (`service` names the guardrail).
 */
export function guardrailVerdict(
  answer: unknown,
  sent: readonly number[],
  count: number,
  service: string,
): GuardVerdict {
  if (!isPlainObject(answer) || (answer.action !== 'NONE' && answer.action !== 'GUARDRAIL_INTERVENED'))
    throw new GuardFailure(`${service} answered without an action (NONE or GUARDRAIL_INTERVENED)`);
  if (answer.action === 'NONE') return { action: 'pass' };
  const assessments = Array.isArray(answer.assessments) ? answer.assessments : [];
  const fired = policiesThatFired(assessments);
  const reason =
    typeof answer.actionReason === 'string' && answer.actionReason !== '' ? answer.actionReason : undefined;
  const matched = fired.length > 0 ? { matched: fired } : {};
  const because = reason === undefined ? {} : { reason };
  if (hasAction(assessments, 'BLOCKED') || !hasAction(assessments, 'ANONYMIZED'))
    return { action: 'reject', ...matched, ...because };
  const outputs = Array.isArray(answer.outputs) ? answer.outputs : [];
  const texts = outputs.map((output) => (isPlainObject(output) ? output.text : undefined));
  if (texts.length !== sent.length || !texts.every((text) => typeof text === 'string'))
    return {
      action: 'reject',
      ...matched,
      reason: `the guardrail anonymized ${sent.length} text(s) but answered ${texts.length} output(s), which cannot be put back in their place`,
    };
  const replacements: (string | undefined)[] = new Array(count).fill(undefined);
  sent.forEach((at, i) => {
    replacements[at] = texts[i] as string;
  });
  return { action: 'mask', replacements, ...matched, ...because };
}

/** Whether any assessment, at any depth, reports `action` (Bedrock's per-filter actions: BLOCKED, ANONYMIZED, NONE). */
function hasAction(value: unknown, action: string): boolean {
  if (Array.isArray(value)) return value.some((each) => hasAction(each, action));
  if (!isPlainObject(value)) return false;
  return value.action === action || Object.values(value).some((each) => hasAction(each, action));
}

/**
 * The policies that acted (BLOCKED or ANONYMIZED), as the access log names them: topic:<name>,
 * content:<filter type>, pii:<entity type>, regex:<name>, word:CUSTOM, word:<managed list>,
 * grounding:<filter type>. Custom words and regexes are named by kind or name, never by the text
 * they matched (it is the user's).
 */
export function policiesThatFired(assessments: readonly unknown[]): string[] {
  const names = new Set<string>();
  const acted = (entry: unknown): entry is Record<string, unknown> =>
    isPlainObject(entry) && (entry.action === 'BLOCKED' || entry.action === 'ANONYMIZED');
  const each = (list: unknown, name: (entry: Record<string, unknown>) => string) => {
    if (Array.isArray(list)) for (const entry of list) if (acted(entry)) names.add(name(entry));
  };
  const label = (value: unknown, fallback: string) => (typeof value === 'string' && value !== '' ? value : fallback);
  for (const assessment of assessments) {
    if (!isPlainObject(assessment)) continue;
    const field = (key: string) => (isPlainObject(assessment[key]) ? assessment[key] : {});
    each(field('topicPolicy').topics, (topic) => `topic:${label(topic.name, 'unnamed')}`);
    each(field('contentPolicy').filters, (filter) => `content:${label(filter.type, 'unknown')}`);
    each(field('wordPolicy').customWords, () => 'word:CUSTOM');
    each(field('wordPolicy').managedWordLists, (list) => `word:${label(list.type, 'MANAGED')}`);
    each(field('sensitiveInformationPolicy').piiEntities, (entity) => `pii:${label(entity.type, 'unknown')}`);
    each(field('sensitiveInformationPolicy').regexes, (regex) => `regex:${label(regex.name, 'unnamed')}`);
    each(field('contextualGroundingPolicy').filters, (filter) => `grounding:${label(filter.type, 'unknown')}`);
  }
  return [...names];
}
