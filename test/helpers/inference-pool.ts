// What the InferencePool tests share (test/dataplane/gateway/inference-pool.test.ts in file mode,
// test/apiserver/inference-pool.test.ts through kubectl): the objects as YAML, and the scripted
// endpoint picker's answers (Envoy ext_proc on gw's protos, ../dataplane/policies/ext-proc-processor.ts).
import { type Conversation, headerOf, type Sent } from '../dataplane/policies/ext-proc-processor.ts';

/** The key gw's backend policy sends the pods (the mocks require it). */
export const POOL_KEY = 'sk-pool';

/** A Pod at `ip` with `labels` (a YAML flow mapping), Ready or not, as its kubelet would report it. */
export function podYaml(name: string, ip: string, labels: string, ready = true): string {
  return `apiVersion: v1
kind: Pod
metadata: {name: ${name}, labels: ${labels}}
spec: {containers: [{name: vllm, image: vllm:1}]}
status:
  phase: Running
  podIP: ${ip}
  conditions: [{type: Ready, status: "${ready ? 'True' : 'False'}"}]
---
`;
}

/** Service `name` of an endpoint picker listening on 127.0.0.1:`port` (its clusterIP and port). */
export function pickerServiceYaml(name: string, port: number): string {
  return `apiVersion: v1
kind: Service
metadata: {name: ${name}}
spec: {clusterIP: 127.0.0.1, ports: [{name: grpc, port: ${port}}]}
---
`;
}

/** InferencePool `name` of the Pods labelled app: vllm at target `port`; `picker` is its endpointPickerRef line, or ''. */
export function poolYaml(name: string, port: number, picker: string): string {
  return `apiVersion: inference.networking.k8s.io/v1
kind: InferencePool
metadata: {name: ${name}}
spec:
  selector: {matchLabels: {app: vllm}}
  targetPorts: [{number: ${port}}]
${picker}---
`;
}

/** GwBackend `name`: a custom Completions provider sending to InferencePool `pool`. */
export function pooledBackendYaml(name: string, pool: string): string {
  return `apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: ${name}}
spec:
  ai:
    provider:
      custom:
        backendRef: {group: inference.networking.k8s.io, kind: InferencePool, name: ${pool}}
        formats: [{type: Completions}]
  policies: {auth: {key: ${POOL_KEY}}}
---
`;
}

/**
 * An endpoint picker's scripted answer, by the request's x-pick header: a (127.0.0.2) or b
 * (127.0.0.3) by header mutation; metadata-b by envoy.lb dynamic metadata; first-outside-then-b
 * an endpoint outside the pool with b as the fallback; outside the not-Ready 127.0.0.4; shed a 429
 * immediate response; rewrite b with the body streamed back changed; ends-at-response b, then the
 * stream ended when gw tells the response. Every other picker answers the response phase
 * (answerResponse). `port` is the target port.
 */
export async function pick(conversation: Conversation, port: number): Promise<void> {
  const headers: Sent = await conversation.expect('request_headers');
  const choice = headerOf(headers.request_headers.headers, 'x-pick') ?? 'a';
  if (!headers.request_headers.end_of_stream) await conversation.expect('request_body');
  const a = `127.0.0.2:${port}`;
  const b = `127.0.0.3:${port}`;
  const endpoint = (value: string) => ({
    request_headers: {
      response: {
        header_mutation: {
          set_headers: [
            { header: { key: 'x-gateway-destination-endpoint', raw_value: Buffer.from(value) } },
            { header: { key: 'x-picked-by', raw_value: Buffer.from('test-epp') } },
          ],
        },
      },
    },
  });
  const lbMetadata = (fields: Record<string, string>) => ({
    request_headers: { response: {} },
    dynamic_metadata: {
      fields: {
        'envoy.lb': {
          structValue: {
            fields: Object.fromEntries(Object.entries(fields).map(([key, value]) => [key, { stringValue: value }])),
          },
        },
      },
    },
  });
  switch (choice) {
    case 'ends-at-response':
      // Picks b, then ends its stream when told the response head, without answering it.
      conversation.send(endpoint(b));
      conversation.send({ request_body: { response: {} } });
      await conversation.next();
      conversation.end();
      return;
    case 'a':
      conversation.send(endpoint(a));
      break;
    case 'b':
      conversation.send(endpoint(b));
      break;
    case 'metadata-b':
      conversation.send(lbMetadata({ 'x-gateway-destination-endpoint': b }));
      break;
    case 'first-outside-then-b':
      conversation.send(
        lbMetadata({
          'x-gateway-destination-endpoint': `10.9.9.9:${port}`,
          'x-gateway-destination-endpoint-fallback': b,
        }),
      );
      break;
    case 'outside':
      conversation.send(endpoint(`127.0.0.4:${port}`));
      break;
    case 'shed':
      conversation.send({
        immediate_response: { status: { code: 'TooManyRequests' }, body: Buffer.from('the pool is saturated') },
      });
      return;
    case 'rewrite': {
      // The body streamed back changed (the model renamed), as a picker that rewrites models does.
      conversation.send(endpoint(b));
      const body = JSON.stringify({ model: 'rewritten-model', messages: [{ role: 'user', content: 'rewritten' }] });
      conversation.send({
        request_body: {
          response: { body_mutation: { streamed_response: { body: Buffer.from(body), end_of_stream: true } } },
        },
      });
      await answerResponse(conversation);
      return;
    }
  }
  conversation.send({ request_body: { response: {} } });
  await answerResponse(conversation);
}

/**
 * The response phase as the Inference Extension's conformance picker does it: the endpoint gw
 * says served the request, echoed to the client in a response header (x-served-endpoint).
 */
async function answerResponse(conversation: Conversation): Promise<void> {
  const message: Sent | undefined = await conversation.next();
  if (message?.request !== 'response_headers') return;
  const served = servedEndpoint(message) ?? 'none';
  conversation.send({
    response_headers: {
      response: {
        header_mutation: { set_headers: [{ header: { key: 'x-served-endpoint', raw_value: Buffer.from(served) } }] },
      },
    },
  });
}

/** The endpoint a response_headers message says served the request (envoy.lb metadata), if it says. */
export function servedEndpoint(message: Sent): string | undefined {
  return message.metadata_context?.filter_metadata?.['envoy.lb']?.fields?.['x-gateway-destination-endpoint-served']
    ?.stringValue;
}
