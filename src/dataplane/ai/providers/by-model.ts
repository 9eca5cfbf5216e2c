// A provider whose API depends on the model: a cloud that serves most models in one format and
// some vendor's models in that vendor's own (Vertex AI serves Claude through rawPredict, Azure AI
// Foundry serves Claude deployments only through the Anthropic Messages API). Two planners of the
// same provider, one for the models `chooses` picks and one for the rest; forwarded requests
// (Passthrough, Detect) and requests naming no model go to the main one.
import { requestModel } from '../formats/index.ts';
import type { PlanError } from './errors.ts';
import { FORWARDED_AS_IS, type ProviderPlanner } from './planner.ts';
import type { CompiledProvider, PlanInput, UpstreamPlan } from './types.ts';

/** What the planner of the chosen models must do: plan, and say what it speaks. */
export type SwitchedPlanner = Pick<CompiledProvider, 'plan' | 'formats'>;

export class ModelSwitchedProvider implements CompiledProvider {
  readonly name: string | undefined;
  readonly family: CompiledProvider['family'];
  readonly formats: CompiledProvider['formats'];
  readonly origin: CompiledProvider['origin'];
  readonly service: CompiledProvider['service'];
  readonly keyStyle: CompiledProvider['keyStyle'];
  readonly model: string | undefined;
  readonly region: string | undefined;
  readonly credentialHost: string | undefined;
  readonly routeOrigins: CompiledProvider['routeOrigins'];
  readonly #main: ProviderPlanner;
  readonly #switched: SwitchedPlanner;
  readonly #chooses: (model: string) => boolean;

  /**
   * `main` and `switched` are the same provider (origin, key style, model override) speaking
   * different formats; `chooses` says which models `switched` serves (the override, else the
   * client's model, decides).
   */
  constructor(main: ProviderPlanner, switched: SwitchedPlanner, chooses: (model: string) => boolean) {
    this.#main = main;
    this.#switched = switched;
    this.#chooses = chooses;
    this.name = main.name;
    this.family = main.family;
    this.formats = Object.freeze([...new Set([...main.formats, ...switched.formats])]);
    this.origin = main.origin;
    this.service = main.service;
    this.keyStyle = main.keyStyle;
    this.model = main.model;
    this.region = main.region;
    this.credentialHost = main.credentialHost;
    this.routeOrigins = main.routeOrigins;
  }

  plan(input: PlanInput): UpstreamPlan | PlanError {
    if (FORWARDED_AS_IS.has(input.routeType)) return this.#main.plan(input);
    const model = this.model ?? requestModel(input.body);
    return model !== undefined && this.#chooses(model) ? this.#switched.plan(input) : this.#main.plan(input);
  }
}
