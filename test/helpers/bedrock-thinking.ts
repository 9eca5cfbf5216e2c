// Extended thinking as Claude on Amazon Bedrock has it, for the Converse stand-in
// (bedrock-stand-in.ts): with thinking on (additionalModelRequestFields.thinking enabled, as
// Bedrock passes it to Claude) the answer starts with a reasoningContent block whose reasoningText
// is signed by converseReasoningSignatureOf (streamed as reasoningContent text deltas, then a
// signature delta). A request that continues a tool use (its last user turn has a toolResult) is
// refused with a ValidationException unless the assistant turn it answers starts with a
// reasoningContent block; a reasoningText anywhere whose signature is not the one given for its
// text is refused too, as is one without a signature.

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Whether the request turns thinking on. */
export function converseThinkingRequested(body: Record<string, unknown>): boolean {
  const fields = body.additionalModelRequestFields;
  if (!isObject(fields) || !isObject(fields.thinking)) return false;
  return fields.thinking.type === 'enabled' || fields.thinking.type === 'adaptive';
}

/** The signature the stand-in gives its reasoning (opaque to clients, checked when it comes back). */
export function converseReasoningSignatureOf(text: string): string {
  return Buffer.from(`bedrock-claude-thinking:${text}`).toString('base64');
}

/** The stand-in's reasoning about a request: the text of its last user turn, quoted. */
export function converseReasoningText(body: Record<string, unknown>): string {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const user = messages.findLast((message) => isObject(message) && message.role === 'user');
  const blocks = isObject(user) && Array.isArray(user.content) ? user.content : [];
  const text = blocks.map((block) => (isObject(block) && typeof block.text === 'string' ? block.text : '')).join('');
  return `thinking about: ${text || 'the tool result'}`;
}

/** Why Bedrock would refuse the request's reasoning (see the header); undefined when it would not. */
export function converseThinkingRefusal(body: Record<string, unknown>, thinking: boolean): string | undefined {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  for (const [i, message] of messages.entries()) {
    if (!isObject(message) || message.role !== 'assistant' || !Array.isArray(message.content)) continue;
    for (const [j, block] of message.content.entries()) {
      const reasoning = isObject(block) && isObject(block.reasoningContent) ? block.reasoningContent : undefined;
      const text = reasoning !== undefined && isObject(reasoning.reasoningText) ? reasoning.reasoningText : undefined;
      if (text === undefined) continue;
      if (typeof text.text !== 'string' || text.signature !== converseReasoningSignatureOf(text.text)) {
        return `The model returned the following errors: messages.${i}.content.${j}: Invalid \`signature\` in \`thinking\` block`;
      }
    }
  }
  if (!thinking) return undefined;
  const lastUser = messages.findLastIndex((message) => isObject(message) && message.role === 'user');
  const user = messages[lastUser];
  const continuesToolUse =
    isObject(user) &&
    Array.isArray(user.content) &&
    user.content.some((block) => isObject(block) && 'toolResult' in block);
  const answered = messages[lastUser - 1];
  if (!continuesToolUse || !isObject(answered) || answered.role !== 'assistant') return undefined;
  const first = Array.isArray(answered.content) ? answered.content[0] : undefined;
  if (isObject(first) && 'reasoningContent' in first) return undefined;
  const found = isObject(first) ? (Object.keys(first)[0] ?? 'text') : 'text';
  return `The model returned the following errors: messages.${lastUser - 1}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${found}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block.`;
}
