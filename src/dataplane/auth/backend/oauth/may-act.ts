// RFC 8693 section 4.4: the `may_act` claim of a subject token names who may act for the subject.
// With actorToken.mayAct Required, gw exchanges only when the subject token (a JWT) has a may_act
// object and every claim it names matches the actor token's (a JWT): its sub, its iss when
// may_act has one, and any other member it lists; a member whose value is a list admits any one
// of its values. The tokens are decoded, not verified: the token endpoint verifies both when it
// exchanges them, and an inbound JWT policy may have verified the subject already. The check only
// keeps gw from asking for a delegation the subject did not allow.

/** The payload of a JWS compact token, or undefined when `token` is not one with a JSON object payload. */
export function jwtPayload(token: string): Record<string, unknown> | undefined {
  const parts = token.split('.');
  if (parts.length !== 3) return undefined;
  try {
    const payload: unknown = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8'));
    return payload !== null && typeof payload === 'object' && !Array.isArray(payload)
      ? (payload as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** Why the subject token does not let the actor act for it (never quoting a token), or undefined when it does. */
export function mayActRefusal(subjectToken: string, actorToken: string): string | undefined {
  const subject = jwtPayload(subjectToken);
  if (subject === undefined) return 'the subject token is not a JWT, so its may_act claim cannot be read';
  const mayAct = subject.may_act;
  if (mayAct === null || typeof mayAct !== 'object' || Array.isArray(mayAct))
    return 'the subject token has no may_act claim (an object naming who may act for it)';
  const allowed = mayAct as Record<string, unknown>;
  if (typeof allowed.sub !== 'string' && !Array.isArray(allowed.sub))
    return "the subject token's may_act claim names no sub";
  const actor = jwtPayload(actorToken);
  if (actor === undefined) return 'the actor token is not a JWT, so its claims cannot be compared with may_act';
  for (const [claim, expected] of Object.entries(allowed)) {
    const actual = actor[claim];
    const matches = Array.isArray(expected)
      ? expected.some((value) => sameValue(value, actual))
      : sameValue(expected, actual);
    if (!matches) return `the actor token's ${JSON.stringify(claim)} claim is not one the subject's may_act allows`;
  }
  return undefined;
}

function sameValue(expected: unknown, actual: unknown): boolean {
  if (expected === null || typeof expected !== 'object') return expected === actual;
  return JSON.stringify(expected) === JSON.stringify(actual);
}
