// The UI's session: whether a token is required and held, where the objects come from (and so
// whether they can be edited), the login that exchanges the admin token for an HttpOnly,
// SameSite=Strict session cookie, and the logout.
import { SESSION_LIFETIME_MS } from '../security/admin-token.ts';
import { sessionCookie } from '../security/request-guard.ts';
import { json, problem, type UiContext, type UiEndpoint } from './endpoint.ts';

/** A wrong token is answered after this long: guessing is slow even within the connection limit. */
const FAILED_LOGIN_DELAY_MS = 500;

/** The session, and to a session holder where the objects come from (nothing more before the login). */
function sessionState(context: UiContext, authenticated = context.authenticated) {
  const { source } = context.sources;
  if (!authenticated) return { tokenRequired: context.token !== undefined, authenticated };
  return {
    tokenRequired: context.token !== undefined,
    authenticated,
    source: source.kind,
    editable: source.kind === 'api-server',
    ...(source.kind !== 'api-server' && { readOnlyBecause: source.why }),
  };
}

export const sessionEndpoints: UiEndpoint[] = [
  { method: 'GET', path: '/ui/api/session', public: true, handle: (context) => json(sessionState(context)) },
  {
    method: 'POST',
    path: '/ui/api/session',
    public: true,
    handle: async (context, request) => {
      if (context.token === undefined) return json(sessionState(context));
      const given = (request.body as { token?: unknown } | undefined)?.token;
      if (typeof given !== 'string' || !context.token.matches(given)) {
        await new Promise((resolve) => setTimeout(resolve, FAILED_LOGIN_DELAY_MS));
        return problem(401, 'that is not the admin token');
      }
      return {
        status: 200,
        body: sessionState(context, true),
        headers: { 'set-cookie': sessionCookie(context.token.newSession(), SESSION_LIFETIME_MS / 1000) },
      };
    },
  },
  {
    method: 'DELETE',
    path: '/ui/api/session',
    handle: (context) => ({
      status: 200,
      body: sessionState(context, context.token === undefined),
      headers: { 'set-cookie': sessionCookie(undefined, 0) },
    }),
  },
];
