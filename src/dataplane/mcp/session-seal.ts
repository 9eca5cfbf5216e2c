// The gateway's Mcp-Session-Id is the session's own state, sealed: AES-256-GCM over the compressed
// JSON, bound (as additional data) to the Gateway and backend it was made for. Any replica that
// holds the same key can open it and carry on with the targets' upstream sessions; a client can
// neither read nor forge one. The key is SESSION_KEY (32 bytes as 64 hex digits, as agentgateway
// takes it), else a secret each Gateway gets when the process first needs it (docs/mcp.md).
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { deflateRawSync, inflateRawSync } from 'node:zlib';

export const SESSION_KEY_ENV = 'SESSION_KEY';
/** Longest session id gw opens (a header value; longer ones are refused unread). */
export const MAX_SESSION_ID_LENGTH = 8192;
/** Largest opened state (the inflated JSON), so a forged deflate bomb cannot get far even with the key. */
const MAX_STATE_BYTES = 64 * 1024;

const VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** SESSION_KEY as a 32-byte key; undefined when unset; a message when it is set but unusable. */
export function parseSessionKey(value: string | undefined): Buffer | string | undefined {
  if (value === undefined || value === '') return undefined;
  const text = value.trim();
  if (/^[0-9a-fA-F]{64}$/.test(text)) return Buffer.from(text, 'hex');
  return `${SESSION_KEY_ENV} must be 32 bytes written as 64 hex digits (openssl rand -hex 32)`;
}

export class SessionSealer {
  readonly #key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== 32) throw new Error('an MCP session key has 32 bytes');
    this.#key = key;
  }

  /** `state` sealed for `binding` (the Gateway and backend): visible ASCII, as session ids must be. */
  seal(state: unknown, binding: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    cipher.setAAD(Buffer.from(binding));
    const body = Buffer.concat([cipher.update(deflateRawSync(JSON.stringify(state))), cipher.final()]);
    return Buffer.concat([Buffer.from([VERSION]), iv, cipher.getAuthTag(), body]).toString('base64url');
  }

  /** The state sealed in `token` for `binding`, or undefined when it is not one (forged, other key or backend). */
  open(token: string, binding: string): unknown {
    if (token.length > MAX_SESSION_ID_LENGTH || !/^[A-Za-z0-9_-]+$/.test(token)) return undefined;
    const data = Buffer.from(token, 'base64url');
    if (data.length < 1 + IV_BYTES + TAG_BYTES + 1 || data[0] !== VERSION) return undefined;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.#key, data.subarray(1, 1 + IV_BYTES));
      decipher.setAAD(Buffer.from(binding));
      decipher.setAuthTag(data.subarray(1 + IV_BYTES, 1 + IV_BYTES + TAG_BYTES));
      const compressed = Buffer.concat([decipher.update(data.subarray(1 + IV_BYTES + TAG_BYTES)), decipher.final()]);
      return JSON.parse(inflateRawSync(compressed, { maxOutputLength: MAX_STATE_BYTES }).toString('utf8'));
    } catch {
      return undefined;
    }
  }
}

/**
 * The sealing key of each Gateway: SESSION_KEY when set (every replica given the same key can
 * resume every session), else a random key made once per Gateway and kept for the life of the
 * process — sessions then survive configuration changes but not a restart, and only the replica
 * that made them can resume them.
 */
export class SessionKeys {
  readonly #shared: SessionSealer | string | undefined;
  readonly #perGateway = new Map<string, SessionSealer>();

  constructor(envValue: string | undefined = process.env[SESSION_KEY_ENV]) {
    const key = parseSessionKey(envValue);
    this.#shared = Buffer.isBuffer(key) ? new SessionSealer(key) : key;
  }

  /** The sealer for a Gateway ("namespace/name"), or why there is none (an unusable SESSION_KEY). */
  sealerFor(gateway: string): SessionSealer | string {
    if (this.#shared !== undefined) return this.#shared;
    let sealer = this.#perGateway.get(gateway);
    if (!sealer) {
      sealer = new SessionSealer(randomBytes(32));
      this.#perGateway.set(gateway, sealer);
    }
    return sealer;
  }
}
