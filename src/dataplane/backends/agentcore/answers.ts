// What a client gets when AgentCore answers InvokeAgentRuntime with an error (decision 0050).
// AWS's errors (restJson1: the x-amzn-errortype header, a JSON body with `message`) fall in two
// groups. The client's own — a payload or session id AWS rejects (400 ValidationException), a
// session busy (409), throttling or a quota (429; AWS's 402 ServiceQuotaExceededException too),
// the agent itself failing (424 RuntimeClientError, as 502), AWS failing (5xx, as 502 unless 503
// or 504) — reach the client with AWS's body and error type under the status a client acts on.
// gw's own — its credentials or signature refused (401, 403, a 400 about the signature), the
// configured runtime or qualifier unknown (404) — are the operator's to fix and can name the
// account and role: the client gets 502 with a request id, the log AWS's error type and message.
import type { Dispatcher } from 'undici';
import type { ResponseVerdict } from '../../proxy/http-forward.ts';
import { sendOwnFailure } from '../../proxy/own-failure.ts';
import type { RequestRecord } from '../../telemetry/request-record.ts';

/** The most of an error body read for the log. */
const LOGGED_BODY_BYTES = 4096;
/** The most of AWS's message that reaches the log. */
const LOGGED_MESSAGE_CHARS = 300;

/** Signature and credential errors AWS's front door answers with 400 rather than 403. */
const SIGNATURE_ERRORS = new Set([
  'IncompleteSignatureException',
  'InvalidSignatureException',
  'MissingAuthenticationToken',
]);

/** The status the client gets for AWS's status, when the error is the client's to act on. */
function clientStatus(status: number): number {
  if (status === 402) return 429;
  if (status === 424) return 502;
  if (status >= 500 && status !== 503 && status !== 504) return 502;
  return status;
}

/** The error code of an x-amzn-errortype value (`Code:namespace-uri`), or undefined. */
export function awsErrorCode(headers: Record<string, string | string[] | undefined>): string | undefined {
  const value = headers['x-amzn-errortype'];
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined || text === '') return undefined;
  return text.split(':')[0]!.trim() || undefined;
}

/** Reads an InvokeAgentRuntime response for `record`: AWS's errors mapped, everything else passed. */
export async function agentCoreVerdict(
  response: Dispatcher.ResponseData,
  record: RequestRecord,
): Promise<ResponseVerdict> {
  const status = response.statusCode;
  const code = awsErrorCode(response.headers);
  // A runtime's own answer (any status), or an error of something in between (a proxy): as it is.
  if (status < 400 || code === undefined) return undefined;
  const gwFault = status === 401 || status === 403 || status === 404 || SIGNATURE_ERRORS.has(code);
  if (!gwFault) {
    record.error = `AgentCore answered ${status} ${code}`;
    const mapped = clientStatus(status);
    return mapped === status ? undefined : { status: mapped };
  }
  const message = await loggedMessage(response.body);
  const detail = `AgentCore refused gw's InvokeAgentRuntime request: ${status} ${code}${message ? `: ${message}` : ''}`;
  return {
    answer: (res) => {
      sendOwnFailure(res, record, detail, 502);
      return 502;
    },
  };
}

/** AWS's message from an error body, bounded; '' when it has none or cannot be read. */
async function loggedMessage(body: Dispatcher.ResponseData['body']): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk as Buffer);
    size += (chunk as Buffer).length;
    if (size >= LOGGED_BODY_BYTES) break;
  }
  const text = Buffer.concat(chunks).subarray(0, LOGGED_BODY_BYTES).toString('utf8');
  let message: unknown;
  try {
    const parsed = JSON.parse(text) as Record<string, unknown>;
    message = parsed.message ?? parsed.Message;
  } catch {
    message = undefined;
  }
  return typeof message === 'string' ? message.replace(/\s+/g, ' ').slice(0, LOGGED_MESSAGE_CHARS) : '';
}
