// Spec document 2, "Credential locations": where a credential is read from (inbound) or
// written to (backend requests).
import { named, object, refine, required, string } from '../schema/build.ts';
import { exactlyOneOf } from '../schema/rules.ts';
import type { Infer } from '../schema/schema.ts';
import { CELExpression, HTTPHeaderName } from './common.ts';

export const AuthorizationHeaderLocation = named(
  {
    name: 'AuthorizationHeaderLocation',
    description: 'A credential carried in a request header, with an optional prefix such as "Bearer ".',
    source: '2',
  },
  object({
    name: required(refine(HTTPHeaderName, { description: 'Name of the header that carries the credential.' })),
    prefix: string({
      minLength: 1,
      maxLength: 256,
      description: 'Text in front of the credential in the header value, such as "Bearer " (trailing space included).',
    }),
  }),
);
export type AuthorizationHeaderLocation = Infer<typeof AuthorizationHeaderLocation>;

export const AuthorizationQueryParameterLocation = named(
  {
    name: 'AuthorizationQueryParameterLocation',
    description: 'A credential carried in a query parameter.',
    source: '2',
  },
  object({
    name: required(string({ minLength: 1, maxLength: 256, description: 'Name of the query parameter.' })),
  }),
);
export type AuthorizationQueryParameterLocation = Infer<typeof AuthorizationQueryParameterLocation>;

export const AuthorizationCookieLocation = named(
  { name: 'AuthorizationCookieLocation', description: 'A credential carried in a cookie.', source: '2' },
  object({
    name: required(string({ minLength: 1, maxLength: 256, description: 'Name of the cookie.' })),
  }),
);
export type AuthorizationCookieLocation = Infer<typeof AuthorizationCookieLocation>;

// The three places shared by both location types.
const locationFields = {
  header: AuthorizationHeaderLocation,
  queryParameter: AuthorizationQueryParameterLocation,
  cookie: AuthorizationCookieLocation,
};

export const AuthorizationLocation = named(
  {
    name: 'AuthorizationLocation',
    description: 'Where a credential is written on the request: a header, a query parameter or a cookie.',
    source: '2',
  },
  object(locationFields, { rules: [exactlyOneOf(['header', 'queryParameter', 'cookie'])] }),
);
export type AuthorizationLocation = Infer<typeof AuthorizationLocation>;

export const AuthorizationExtractionLocation = named(
  {
    name: 'AuthorizationExtractionLocation',
    description: 'Where a client credential is read from: a header, a query parameter, a cookie or a CEL expression.',
    source: '2',
  },
  object(
    {
      ...locationFields,
      expression: refine(CELExpression, {
        description:
          'CEL expression over the request that yields the credential, for credentials no fixed place holds.',
      }),
    },
    { rules: [exactlyOneOf(['header', 'queryParameter', 'cookie', 'expression'])] },
  ),
);
export type AuthorizationExtractionLocation = Infer<typeof AuthorizationExtractionLocation>;
