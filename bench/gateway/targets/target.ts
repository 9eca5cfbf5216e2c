// What the harness needs from each thing it measures.
import type { AnswerFormat } from '../chat-request.ts';
import type { Endpoint } from '../load.ts';
import type { UpstreamPorts } from '../upstream.ts';

export type TargetId =
  | 'direct'
  | 'direct-anthropic'
  | 'direct-bedrock'
  | 'direct-gemini'
  | 'nginx'
  | 'gw'
  | 'gw-translated'
  | 'gw-baseline'
  | 'gw-translated-baseline'
  | 'gw-sigv4'
  | 'gw-token-exchange'
  | 'gw-bedrock'
  | 'gw-gemini'
  | 'gw-responses'
  | 'gw-4k'
  | 'gw-guarded'
  | 'gw-watched'
  | 'portkey';

export interface RunningTarget {
  /** The format clients speak to it (and get answers in). */
  format: AnswerFormat;
  /** The non-streaming request the load is made of. */
  load: Endpoint;
  /** A streaming request, for time to first token. */
  stream: Endpoint;
  /** The process measured for memory and CPU (with everything it started); none for direct. */
  pid?: number;
  /** How the target runs, for the report (e.g. "2 worker processes"). */
  notes: string[];
  stop(): Promise<void>;
}

/** The mocks a target's traffic ends at; its direct row is the baseline of its added latency. */
export type UpstreamFamily = 'openai' | 'anthropic' | 'bedrock' | 'gemini';

export interface TargetDefinition {
  id: TargetId;
  /** The row label in the table. */
  label: string;
  /** Which mocks the target talks to: gw translated talks to the Anthropic ones. */
  upstreamFamily: UpstreamFamily;
  /** Starts the target in front of the mocks; throws TargetUnavailable when it cannot run here. */
  start(ports: UpstreamPorts): Promise<RunningTarget>;
}

/** A target that cannot run on this machine (not installed, not implemented yet, failed to start). */
export class TargetUnavailable extends Error {
  override name = 'TargetUnavailable';
}
