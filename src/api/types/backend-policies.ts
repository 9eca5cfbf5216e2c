// Spec document 2, "Backend connection settings": the policy bundles a GwBackend (BackendFull),
// a GwPolicy's `backend` section (BackendFull) and a named LLM provider (BackendWithAI) carry.
import { named, object, refine } from '../schema/build.ts';
import type { Infer } from '../schema/schema.ts';
import { BackendAI } from './ai.ts';
import { BackendAuth } from './backend-auth.ts';
import { BackendHTTP, BackendTCP, BackendTLS, BackendTunnel, Health } from './backend-connection.ts';
import { ExtAuth } from './inbound-auth.ts';
import { BackendMCP } from './mcp.ts';
import { Transformation } from './traffic.ts';

const withAIFields = {
  tcp: BackendTCP,
  tls: BackendTLS,
  http: BackendHTTP,
  tunnel: BackendTunnel,
  auth: refine(BackendAuth, { description: 'Credentials sent to the backend.' }),
  ai: refine(BackendAI, { description: 'LLM request processing; applies only to ai backends.' }),
  transformation: refine(Transformation, { description: 'Request and response header/body transformation.' }),
  health: Health,
};

export const BackendWithAI = named(
  {
    name: 'BackendWithAI',
    description: 'Policies for traffic sent to one LLM provider of an ai backend.',
    source: '2',
  },
  object(withAIFields),
);
export type BackendWithAI = Infer<typeof BackendWithAI>;

export const BackendFull = named(
  {
    name: 'BackendFull',
    description:
      'Policies for traffic sent to a backend: connection (tcp, tls, http, tunnel), health, credentials, and the ai or mcp settings of those backend kinds.',
    source: '2',
  },
  object({
    ...withAIFields,
    mcp: refine(BackendMCP, { description: 'MCP processing; applies only to mcp backends.' }),
    extAuth: refine(ExtAuth, { description: 'External authorization of requests to this backend.' }),
  }),
);
export type BackendFull = Infer<typeof BackendFull>;
