// The wire format of a webhook prompt guard, agentgateway's guardrails webhook API: gw POSTs the
// texts of one side to `/request` as `{"body":{"messages":[{role,content}...]}}` or to
// `/response` as `{"body":{"choices":[{"message":{role,content}}...]}}` — one message (or
// choice) per text gw read, in order — and the service answers `{"action": ...}`: an action
// without a body passes; with `body` a string and `status_code`, rejects; with `body` the
// messages (or choices) again, masks, each content replacing the text it stands for. Anything
// else is an answer gw cannot read: a GuardFailure, which the guard's failure mode decides
// (agentgateway reads an unreadable action as a pass; gw does not let a malformed answer open
// the gate). docs/ai-policies.md "Webhook guards" is the protocol as users read it.
import { isPlainObject } from '../formats/json.ts';
import { GuardFailure, type GuardText, type GuardVerdict } from './guard.ts';
import type { GuardSide } from './outcome.ts';

/** The path of each side's call on the webhook service. */
export const WEBHOOK_PATHS: { readonly [side in GuardSide]: string } = { request: '/request', response: '/response' };

/** The JSON body gw sends for one side's texts. */
export function webhookRequestBody(side: GuardSide, texts: readonly GuardText[]): unknown {
  const messages = texts.map(({ role, text }) => ({ role, content: text }));
  return side === 'request' ? { body: { messages } } : { body: { choices: messages.map((message) => ({ message })) } };
}

/**
 * The verdict in a webhook's answer for `texts`, or a GuardFailure (thrown) naming what is wrong
 * with it. `service` names the webhook in the failure's message.
 */
export function webhookVerdict(
  answer: unknown,
  side: GuardSide,
  texts: readonly GuardText[],
  service: string,
): GuardVerdict {
  const unreadable = (what: string) => new GuardFailure(`${service} answered ${what}`);
  if (!isPlainObject(answer) || !isPlainObject(answer.action)) throw unreadable('without an action object');
  const { action } = answer;
  if (action.reason !== undefined && typeof action.reason !== 'string')
    throw unreadable('a reason that is not a string');
  const reason = action.reason === undefined ? {} : { reason: action.reason };
  const { body } = action;
  if (body === undefined) return { action: 'pass', ...reason };
  if (typeof body === 'string') {
    const status = action.status_code;
    if (typeof status !== 'number' || !Number.isInteger(status) || status < 200 || status > 599)
      throw unreadable('a reject action without a status_code from 200 to 599');
    return { action: 'reject', ...reason, answer: { status, message: body } };
  }
  if (!isPlainObject(body)) throw unreadable('an action whose body is neither a message nor messages');
  return { action: 'mask', ...reason, replacements: maskedTexts(body, side, texts, unreadable) };
}

/** A mask's messages (or choices) mapped back onto the texts: a changed content replaces its text. */
function maskedTexts(
  body: Record<string, unknown>,
  side: GuardSide,
  texts: readonly GuardText[],
  unreadable: (what: string) => GuardFailure,
): (string | undefined)[] {
  const list = side === 'request' ? body.messages : body.choices;
  const field = side === 'request' ? 'messages' : 'choices';
  if (!Array.isArray(list)) throw unreadable(`a mask action without body.${field}`);
  if (list.length !== texts.length)
    throw unreadable(
      `a mask of ${list.length} ${field} for the ${texts.length} it was sent (one per text, in order, is expected)`,
    );
  return list.map((entry: unknown, index) => {
    const message = side === 'request' ? entry : isPlainObject(entry) ? entry.message : undefined;
    if (!isPlainObject(message) || typeof message.content !== 'string')
      throw unreadable(`a mask whose ${field}[${index}] has no string content`);
    return message.content === texts[index]!.text ? undefined : message.content;
  });
}
