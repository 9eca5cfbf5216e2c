// Why generation stopped: Anthropic stop_reason <-> Chat Completions finish_reason.

const FINISH_REASON_OF_STOP_REASON: Record<string, string> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  // A server tool's long turn was paused; to a Chat Completions client the turn simply ended.
  pause_turn: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  refusal: 'content_filter',
};

const STOP_REASON_OF_FINISH_REASON: Record<string, string> = {
  stop: 'end_turn',
  length: 'max_tokens',
  tool_calls: 'tool_use',
  function_call: 'tool_use',
  content_filter: 'refusal',
};

/** A Messages stop_reason as a Chat Completions finish_reason (unknown or null: "stop"). */
export function finishReasonFor(stopReason: unknown): string {
  return (typeof stopReason === 'string' && FINISH_REASON_OF_STOP_REASON[stopReason]) || 'stop';
}

/** A Chat Completions finish_reason as a Messages stop_reason (unknown or null: "end_turn"). */
export function stopReasonFor(finishReason: unknown): string {
  return (typeof finishReason === 'string' && STOP_REASON_OF_FINISH_REASON[finishReason]) || 'end_turn';
}
