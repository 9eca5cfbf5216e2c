// The cloudtwoModelArmor prompt guard (CloudtwoModelArmor: templateId, projectId, location,
// policies): Google Cloud Model Armor's template checks the texts of a request
// (:sanitizeUserPrompt) or of an answer (:sanitizeModelResponse). The texts of a side go in one
// call, joined by newlines as agentgateway does, so the filters see the whole conversation; a
// filter match refuses, and a match of Sensitive Data Protection's de-identification alone masks
// with the text Google de-identified (one call per text then, so each replacement maps onto its
// own text). Reached at modelarmor.{location}.rep.googleapis.com, or where gcloud's
// CLOUDSDK_API_ENDPOINT_OVERRIDES_MODELARMOR points, with an access token of the policies'
// cloudtwo credentials or, unset, of the ambient ones. Choices: docs/decisions/0029-model-armor.md.
import type { CloudtwoModelArmor } from '../../../api/types/ai.ts';
import type { BackendAuth } from '../../../api/types/backend-auth.ts';
import { isServiceEndpointProblem, serviceEndpoint } from '../../upstream/service-endpoint.ts';
import type { Guard, GuardCall, GuardCompiler, GuardVerdict } from './guard.ts';
import { type ModelArmorReading, readSanitizeAnswer } from './model-armor-answer.ts';
import { compileGuardService, type GuardService } from './service-call.ts';

export const DEFAULT_MODEL_ARMOR_LOCATION = 'us-central1';

/** gcloud's override of the Model Armor endpoint (api_endpoint_overrides/modelarmor): the service root URL. */
export const MODEL_ARMOR_ENDPOINT_ENV = 'CLOUDSDK_API_ENDPOINT_OVERRIDES_MODELARMOR';

/** Without policies.auth: an access token of the ambient Google credentials (agentgateway's default too). */
const AMBIENT_GOOGLE_CREDENTIALS: BackendAuth = { cloudtwo: {} };

/** How many texts are de-identified at once when a mask needs one call per text. */
const DEIDENTIFY_CONCURRENCY = 4;

// A location is a hostname label (modelarmor.<location>.rep.googleapis.com) and a path segment.
const LOCATION = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

export const modelArmorGuard: GuardCompiler<CloudtwoModelArmor> = (config, path, input) => {
  const location = config.location ?? DEFAULT_MODEL_ARMOR_LOCATION;
  if (!LOCATION.test(location))
    return {
      path: `${path}.location`,
      message: `"${location}" is not a Google Cloud location (lowercase letters, digits and hyphens, such as us-central1); fix the location.`,
    };
  if (config.policies?.auth?.cloudtwo?.type === 'IdToken')
    return {
      path: `${path}.policies.auth.cloudtwo.type`,
      message:
        'Model Armor accepts OAuth access tokens, not ID tokens; remove type (or set AccessToken) so gw sends an access token.',
    };
  // The override is the service's root URL (gcloud's api_endpoint_overrides/modelarmor).
  const endpoint = serviceEndpoint(`https://modelarmor.${location}.rep.googleapis.com`, [MODEL_ARMOR_ENDPOINT_ENV]);
  if (isServiceEndpointProblem(endpoint)) return { path, message: endpoint.message };
  const template = `projects/${encodeURIComponent(config.projectId)}/locations/${location}/templates/${encodeURIComponent(config.templateId)}`;
  const service = compileGuardService(
    {
      name: `Model Armor (${template})`,
      destination: endpoint.destination,
      basePath: endpoint.basePath,
      policies: config.policies,
      path,
      defaultAuth: AMBIENT_GOOGLE_CREDENTIALS,
    },
    input,
  );
  if ('message' in service) return service;
  return new ModelArmorGuard(service, `/v1/${template}`);
};

class ModelArmorGuard implements Guard {
  readonly kind = 'cloudtwoModelArmor';
  // The managed services have no failure mode field: a check that cannot be made refuses (decision 0028).
  readonly failureMode = 'FailClosed';
  readonly #service: GuardService;
  readonly #templatePath: string;

  constructor(service: GuardService, templatePath: string) {
    this.#service = service;
    this.#templatePath = templatePath;
  }

  async check(call: GuardCall): Promise<GuardVerdict> {
    const texts = call.texts.map((each) => each.text);
    if (texts.every((text) => text === '')) return { action: 'pass' };
    const whole = await this.#sanitize(
      texts.filter((text) => text !== ''),
      call,
    );
    if (whole.blocking.length > 0) return { action: 'reject', matched: whole.blocking };
    if (whole.deidentified === undefined) return { action: 'pass' };
    if (texts.length === 1)
      return { action: 'mask', replacements: [whole.deidentified.text], matched: whole.deidentified.infoTypes };
    return await this.#maskEach(texts, whole.deidentified, call);
  }

  /**
   * De-identifies each text on its own: Google's de-identified form of the joined texts cannot be
   * split back onto them (a replacement may swallow or add the newlines that joined them).
   */
  async #maskEach(texts: string[], whole: { infoTypes: string[] }, call: GuardCall): Promise<GuardVerdict> {
    const readings: (ModelArmorReading | undefined)[] = new Array(texts.length);
    let next = 0;
    const worker = async () => {
      while (next < texts.length) {
        const index = next++;
        if (texts[index] !== '') readings[index] = await this.#sanitize([texts[index]!], call);
      }
    };
    await Promise.all(Array.from({ length: Math.min(DEIDENTIFY_CONCURRENCY, texts.length) }, worker));
    const blocking = readings.flatMap((reading) => reading?.blocking ?? []);
    if (blocking.length > 0) return { action: 'reject', matched: [...new Set(blocking)] };
    // What Google found in the joined texts is in none alone (it spans two): it cannot be masked.
    if (readings.every((reading) => reading?.deidentified === undefined))
      return { action: 'reject', matched: whole.infoTypes, reason: 'sensitive data across texts cannot be masked' };
    const infoTypes = new Set(readings.flatMap((reading) => reading?.deidentified?.infoTypes ?? []));
    return {
      action: 'mask',
      replacements: readings.map((reading) => reading?.deidentified?.text),
      matched: [...infoTypes],
    };
  }

  async #sanitize(texts: string[], call: GuardCall): Promise<ModelArmorReading> {
    const text = texts.join('\n');
    const request =
      call.side === 'request'
        ? { method: 'sanitizeUserPrompt', body: { userPromptData: { text } } }
        : { method: 'sanitizeModelResponse', body: { modelResponseData: { text } } };
    const answer = await this.#service.post({
      path: `${this.#templatePath}:${request.method}`,
      body: request.body,
      incoming: { headers: call.headers, variables: call.variables },
      signal: call.signal,
    });
    return readSanitizeAnswer(answer, this.#service.name);
  }
}
