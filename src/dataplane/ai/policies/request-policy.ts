// The request side of an AI backend's policy (BackendAI plus a GwModel's transformations),
// compiled once per configuration and applied per request. applyToRequest runs, in order:
//   1. modelAliases     the client's `model` replaced by the provider's name
//   2. prompt           prepend/append messages (Completions and Messages route types only)
//   3. defaults         set a field only when the client left it out (or sent null)
//   4. overrides        set a field, replacing the client's value
//   5. transformations  CEL over the body as steps 1-4 left it; a result replaces the field,
//                       so for the same field a transformation beats an override
// markPromptCache adds promptCaching's cache markers to the body in the provider's format (before
// finalTransformations, which see them); applyFinal runs finalTransformations on that body.
// docs/ai-policies.md gives the reasons for this order.
import type { BackendAI, FieldDefault, FieldTransformation, RouteType } from '../../../api/types/ai.ts';
import type { ApiFormat, JsonObject } from '../formats/types.ts';
import { hasValue, setField } from './body-fields.ts';
import { compileModelAliases, type ModelAliasResolver } from './model-aliases.ts';
import { compilePromptCaching, type PromptCacher } from './prompt-caching.ts';
import { compilePromptEnrichment, type PromptEnricher } from './prompt-enrichment.ts';
import { compileRouteTypes, policyStepsFor, type RouteTypeOf } from './route-types.ts';
import { type CompiledTransformations, compileTransformations, transformationEntries } from './transformations.ts';
import type { AiFinalResult, AiPolicyError, AiPolicyWarning, AiRequestResult } from './types.ts';

/** A GwModel's request-body policies (ModelPolicies.transformations / finalTransformations). */
export interface ModelRequestPolicies {
  transformations?: FieldTransformation[];
  finalTransformations?: FieldTransformation[];
}

export interface CompiledAiRequestPolicy {
  /** BackendAI.routes: the route type of a request path. */
  readonly routeTypeOf: RouteTypeOf;
  /**
   * Applies steps 1-5 to a client's request body of `format` on a `routeType` route. The input
   * body is not modified; the result shares the values it did not change with it.
   */
  applyToRequest(
    body: JsonObject,
    format: ApiFormat,
    routeType: RouteType,
    variables: Record<string, unknown>,
  ): AiRequestResult;
  /**
   * promptCaching's markers on a chat body in the provider's format (`messages`, `converse`; the
   * model is the one sent). Returns the body itself when nothing is added; never modifies it.
   */
  markPromptCache(providerBody: JsonObject, providerFormat: string, model: string | undefined): JsonObject;
  /**
   * finalTransformations on the body in the provider's format. Call it only for route types
   * whose body policies run (`policyStepsFor(routeType).body`). The input is not modified.
   */
  applyFinal(providerBody: JsonObject, variables: Record<string, unknown>): AiFinalResult;
}

/**
 * Compiles an AI backend policy (with the model's transformations, which win over the
 * backend's for the same field). Returns every CEL syntax error with its path instead.
 */
export function compileAiRequestPolicy(
  ai: BackendAI | undefined,
  modelPolicies?: ModelRequestPolicies,
): CompiledAiRequestPolicy | AiPolicyError[] {
  const errors: AiPolicyError[] = [];
  const transformations = compileTransformations(
    transformationEntries(ai?.transformations, 'ai.transformations'),
    transformationEntries(modelPolicies?.transformations, 'policies.transformations'),
    errors,
  );
  const finalTransformations = compileTransformations(
    transformationEntries(ai?.finalTransformations, 'ai.finalTransformations'),
    transformationEntries(modelPolicies?.finalTransformations, 'policies.finalTransformations'),
    errors,
  );
  if (errors.length > 0) return errors;
  return new AiRequestPolicy(
    compileRouteTypes(ai?.routes),
    compileModelAliases(ai?.modelAliases),
    compilePromptEnrichment(ai?.prompt),
    ai?.defaults ?? [],
    ai?.overrides ?? [],
    transformations,
    finalTransformations,
    compilePromptCaching(ai?.promptCaching),
  );
}

class AiRequestPolicy implements CompiledAiRequestPolicy {
  readonly routeTypeOf: RouteTypeOf;
  readonly #aliases: ModelAliasResolver | undefined;
  readonly #enrich: PromptEnricher | undefined;
  readonly #defaults: FieldDefault[];
  readonly #overrides: FieldDefault[];
  readonly #transformations: CompiledTransformations | undefined;
  readonly #finalTransformations: CompiledTransformations | undefined;
  readonly #promptCaching: PromptCacher | undefined;

  constructor(
    routeTypeOf: RouteTypeOf,
    aliases: ModelAliasResolver | undefined,
    enrich: PromptEnricher | undefined,
    defaults: FieldDefault[],
    overrides: FieldDefault[],
    transformations: CompiledTransformations | undefined,
    finalTransformations: CompiledTransformations | undefined,
    promptCaching: PromptCacher | undefined,
  ) {
    this.routeTypeOf = routeTypeOf;
    this.#aliases = aliases;
    this.#enrich = enrich;
    this.#defaults = defaults;
    this.#overrides = overrides;
    this.#transformations = transformations;
    this.#finalTransformations = finalTransformations;
    this.#promptCaching = promptCaching;
  }

  applyToRequest(
    body: JsonObject,
    format: ApiFormat,
    routeType: RouteType,
    variables: Record<string, unknown>,
  ): AiRequestResult {
    const steps = policyStepsFor(routeType);
    const aliases = steps.modelAliases ? this.#aliases : undefined;
    const enrich = steps.promptEnrichment ? this.#enrich : undefined;
    const bodyPolicies = steps.body;
    if (
      !aliases &&
      !enrich &&
      !(bodyPolicies && (this.#defaults.length > 0 || this.#overrides.length > 0 || this.#transformations))
    ) {
      return { body };
    }

    const out: JsonObject = { ...body };
    if (aliases && typeof out.model === 'string') {
      const model = aliases(out.model);
      if (model !== undefined) out.model = model;
    }
    if (enrich) {
      const rejected = enrich(out, format);
      if (rejected) return { body, rejected };
    }
    if (!bodyPolicies) return { body: out };
    for (const { field, value } of this.#defaults) {
      if (!hasValue(out, field)) setField(out, field, copyJson(value));
    }
    for (const { field, value } of this.#overrides) setField(out, field, copyJson(value));
    const warnings: AiPolicyWarning[] = [];
    this.#transformations?.apply(out, variables, warnings);
    return warnings.length > 0 ? { body: out, warnings } : { body: out };
  }

  markPromptCache(providerBody: JsonObject, providerFormat: string, model: string | undefined): JsonObject {
    return this.#promptCaching === undefined ? providerBody : this.#promptCaching(providerBody, providerFormat, model);
  }

  applyFinal(providerBody: JsonObject, variables: Record<string, unknown>): AiFinalResult {
    if (!this.#finalTransformations) return { body: providerBody };
    const out: JsonObject = { ...providerBody };
    const warnings: AiPolicyWarning[] = [];
    this.#finalTransformations.apply(out, variables, warnings);
    return warnings.length > 0 ? { body: out, warnings } : { body: out };
  }
}

/** A configured value as a request's own: later steps may change a body's objects in place. */
function copyJson(value: unknown): unknown {
  return value !== null && typeof value === 'object' ? structuredClone(value) : value;
}
