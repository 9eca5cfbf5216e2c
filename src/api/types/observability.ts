// Spec document 2, "Observability" (and Tracing, listed with the traffic building blocks):
// access logs with optional OTLP export, trace export, and custom metric labels.
import { array, enumOf, named, object, refine, required, string } from '../schema/build.ts';
import { onlyWhen } from '../schema/rules.ts';
import type { Infer, ValidationRule } from '../schema/schema.ts';
import { CELExpression, ShortString, TinyString } from './common.ts';
import { endpointReferenceFields, endpointReferenceRule } from './references.ts';

export const AttributeAdd = named(
  {
    name: 'AttributeAdd',
    description: 'An attribute added to telemetry: its name and the CEL expression of its value.',
    source: '2',
  },
  object({
    name: required(refine(ShortString, { description: 'Attribute (or label) name.' })),
    expression: required(refine(CELExpression, { description: 'CEL that computes the value.' })),
  }),
);
export type AttributeAdd = Infer<typeof AttributeAdd>;

export const LogTracingAttributes = named(
  {
    name: 'LogTracingAttributes',
    description: 'Attributes added to or removed from access log entries or spans.',
    source: '2',
    notes: 'An added attribute whose expression fails is left out of the entry.',
  },
  object({
    remove: array(TinyString, { minItems: 1, maxItems: 32, description: 'Default attributes to drop.' }),
    add: array(AttributeAdd, { minItems: 1, description: 'Attributes to add, name to CEL.' }),
  }),
);
export type LogTracingAttributes = Infer<typeof LogTracingAttributes>;

// OTLP export settings shared by the access-log exporter and Tracing.
const otlpProtocolField = enumOf(['GRPC', 'HTTP'], {
  default: 'GRPC',
  description: 'OTLP transport: gRPC, or protobuf over HTTP.',
});
const otlpPath = (defaultPath: string) =>
  string({
    minLength: 1,
    maxLength: 1024,
    pattern: '^/[^?#\\s]*$',
    description: `Request path of the OTLP/HTTP exporter; ${defaultPath} when unset. Only with protocol HTTP.`,
  });
// The path default depends on the protocol, so it is applied at runtime, not by the schema:
// a structural default would set a path on gRPC exporters too.
const pathOnlyWithHTTP: ValidationRule = onlyWhen('path', "self.protocol == 'HTTP'", 'with protocol HTTP');

export const OtlpAccessLog = named(
  {
    name: 'OtlpAccessLog',
    description: 'Access log entries exported to an OpenTelemetry (OTLP) collector.',
    source: '2',
    notes:
      'path applies only to protocol HTTP (gRPC has no request path) and is rejected with GRPC; unset, it is /v1/logs.',
  },
  object(
    {
      ...endpointReferenceFields,
      filter: refine(CELExpression, {
        description: 'Export an entry only when true; the access log filter when unset.',
      }),
      attributes: refine(LogTracingAttributes, {
        description: 'Attribute changes for exported entries; the access log attributes when unset.',
      }),
      protocol: otlpProtocolField,
      path: otlpPath('/v1/logs'),
    },
    { rules: [endpointReferenceRule, pathOnlyWithHTTP] },
  ),
);
export type OtlpAccessLog = Infer<typeof OtlpAccessLog>;

export const AccessLog = named(
  {
    name: 'AccessLog',
    description: 'Access logging: which requests are logged and which fields are added.',
    source: '2',
  },
  object({
    filter: refine(CELExpression, { description: 'An entry is logged only when this is true.' }),
    attributes: refine(LogTracingAttributes, { description: 'Default fields to drop and fields to add.' }),
    otlp: refine(OtlpAccessLog, { description: 'Also export entries to an OTLP collector.' }),
  }),
);
export type AccessLog = Infer<typeof AccessLog>;

export const Tracing = named(
  {
    name: 'Tracing',
    description: 'Spans exported to an OpenTelemetry (OTLP) collector, with sampling and attributes.',
    source: 'gw',
    notes:
      'Not shown in the spec beyond "one of backendRef, url"; gw follows agentgateway\'s frontend tracing: an OTLP exporter (protocol, path default /v1/traces for HTTP only), span attributes, resource attributes, sampling expressions and a span filter.',
  },
  object(
    {
      ...endpointReferenceFields,
      protocol: otlpProtocolField,
      path: otlpPath('/v1/traces'),
      attributes: refine(LogTracingAttributes, {
        description: 'Default span attributes to drop and attributes to add.',
      }),
      resources: array(AttributeAdd, {
        minItems: 1,
        maxItems: 64,
        description: 'Resource attributes of exported spans, name to CEL.',
      }),
      randomSampling: refine(CELExpression, {
        description:
          'Fraction of traces started here that are sampled: a number 0-1 or a boolean. No random sampling when unset.',
      }),
      clientSampling: refine(CELExpression, {
        description: 'Whether to honour the sampling decision of an incoming trace context; always when unset.',
      }),
      filter: refine(CELExpression, { description: 'Export a span only when true.' }),
    },
    { rules: [endpointReferenceRule, pathOnlyWithHTTP] },
  ),
);
export type Tracing = Infer<typeof Tracing>;

export const MetricAttributes = named(
  {
    name: 'MetricAttributes',
    description: 'Labels added to request metrics, computed with CEL.',
    source: '2',
    notes:
      'A label whose expression fails gets the value "unknown". Every label multiplies the number of series: keep cardinality low.',
  },
  object({
    // Two labels with one name cannot both be exported, so names are list-map keys.
    add: array(AttributeAdd, {
      minItems: 1,
      maxItems: 16,
      listType: 'map',
      listMapKeys: ['name'],
      description: 'Labels to add, name to CEL.',
    }),
  }),
);
export type MetricAttributes = Infer<typeof MetricAttributes>;

export const MetricLabels = named(
  { name: 'MetricLabels', description: 'Labels added to request metrics.', source: '2' },
  object({ attributes: required(MetricAttributes) }),
);
export type MetricLabels = Infer<typeof MetricLabels>;
