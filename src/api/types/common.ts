// Spec document 2, "Common types": the scalar types every other type builds on.
import { integer, intOrString, json, named, string } from '../schema/build.ts';
import type { Infer } from '../schema/schema.ts';

/** A DNS-1123 subdomain: lowercase labels joined by dots. */
export const DNS_SUBDOMAIN_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';
/** RFC 7230 token characters, the characters of an HTTP header name. */
export const HEADER_TOKEN_PATTERN = "^[A-Za-z0-9!#$%&'*+\\-.^_`|~]+$";
/** A Kubernetes quantity without sign: 2Mi, 512k, 1e6, 1.5G. */
export const QUANTITY_PATTERN =
  '^(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE][+-]?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$';
export const DURATION_PATTERN = '^([0-9]{1,5}(h|m|s|ms)){1,4}$';
/** http(s)://host[:port][/path] with no query, fragment or user info. */
export const HTTP_URL_PATTERN = '^https?://[^/?#@\\s]+(/[^?#\\s]*)?$';

export const ShortString = named(
  { name: 'ShortString', description: 'A string of 1 to 256 characters.', source: '2' },
  string({ minLength: 1, maxLength: 256 }),
);
export type ShortString = Infer<typeof ShortString>;

export const LongString = named(
  { name: 'LongString', description: 'A string of 1 to 1024 characters.', source: '2' },
  string({ minLength: 1, maxLength: 1024 }),
);
export type LongString = Infer<typeof LongString>;

export const TinyString = named(
  { name: 'TinyString', description: 'A string of 1 to 64 characters.', source: '2' },
  string({ minLength: 1, maxLength: 64 }),
);
export type TinyString = Infer<typeof TinyString>;

export const CELExpression = named(
  {
    name: 'CELExpression',
    description: 'A CEL expression.',
    source: '2',
    notes:
      'Compiled once when the controller translates the object. A syntax error is not an admission error (a cluster cannot check it either): `gw validate` prints it as a warning and the controller reports it as a condition.',
  },
  string({ minLength: 1, maxLength: 16384 }),
);
export type CELExpression = Infer<typeof CELExpression>;

export const Duration = named(
  { name: 'Duration', description: 'A duration such as 30s, 1m30s or 500ms (units h, m, s, ms).', source: '2' },
  string({ maxLength: 32, pattern: DURATION_PATTERN }),
);
export type Duration = Infer<typeof Duration>;

export const ByteSize = named(
  { name: 'ByteSize', description: 'A size in bytes: an integer, or a quantity such as 2Mi or 512k.', source: '2' },
  intOrString({
    minLength: 1,
    maxLength: 32,
    pattern: QUANTITY_PATTERN,
    rules: [{ rule: 'type(self) == string || self >= 0', message: 'a byte size must not be negative' }],
  }),
);
export type ByteSize = Infer<typeof ByteSize>;

export const HTTPHeaderName = named(
  { name: 'HTTPHeaderName', description: 'An HTTP header name.', source: '2' },
  string({ minLength: 1, maxLength: 256, pattern: HEADER_TOKEN_PATTERN }),
);
export type HTTPHeaderName = Infer<typeof HTTPHeaderName>;

export const HeaderName = named(
  {
    name: 'HeaderName',
    description: 'A header name; an HTTP/2 pseudo-header such as :authority is allowed.',
    source: '2',
  },
  string({ minLength: 1, maxLength: 256, pattern: "^:?[A-Za-z0-9!#$%&'*+\\-.^_`|~]+$" }),
);
export type HeaderName = Infer<typeof HeaderName>;

export const SectionName = named(
  { name: 'SectionName', description: 'Name of a section of the referent, such as a Gateway listener.', source: '2' },
  string({ minLength: 1, maxLength: 253, pattern: DNS_SUBDOMAIN_PATTERN }),
);
export type SectionName = Infer<typeof SectionName>;

export const Group = named(
  { name: 'Group', description: 'API group of the referent; empty for the core group.', source: '2' },
  string({ maxLength: 253, pattern: `^$|${DNS_SUBDOMAIN_PATTERN}` }),
);
export type Group = Infer<typeof Group>;

export const Kind = named(
  { name: 'Kind', description: 'Kind of the referent.', source: '2' },
  string({ minLength: 1, maxLength: 63, pattern: '^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$' }),
);
export type Kind = Infer<typeof Kind>;

export const ObjectName = named(
  { name: 'ObjectName', description: 'Name of the referent.', source: '2' },
  string({ minLength: 1, maxLength: 253 }),
);
export type ObjectName = Infer<typeof ObjectName>;

export const JSONValue = named({ name: 'JSON', description: 'Any JSON value.', source: '2' }, json());
export type JSONValue = Infer<typeof JSONValue>;

export const SNI = named(
  { name: 'SNI', description: 'A TLS server name (a DNS name).', source: '2' },
  string({ minLength: 1, maxLength: 253, pattern: DNS_SUBDOMAIN_PATTERN }),
);
export type SNI = Infer<typeof SNI>;

/** A TCP/UDP port number (Gateway API PortNumber). */
export const PortNumber = named(
  { name: 'PortNumber', description: 'Port number, 1-65535.', source: 'gateway-api' },
  integer({ format: 'int32', minimum: 1, maximum: 65535 }),
);
export type PortNumber = Infer<typeof PortNumber>;

/** An http(s) URL with no query, fragment or user info (the `url` of an endpoint reference). */
export const HTTPURL = named(
  { name: 'URL', description: 'An http or https URL without query, fragment or user info.', source: '2' },
  string({ minLength: 1, maxLength: 1024, pattern: HTTP_URL_PATTERN }),
);
export type HTTPURL = Infer<typeof HTTPURL>;
