// Collects what a request translation dropped or changed, for the proxy to log or report.
import type { JsonObject, RequestTranslation, TranslationWarning } from './types.ts';

export class Warnings {
  readonly #items: TranslationWarning[] = [];
  readonly #target: string;

  /** `target` names the target API in messages, such as "the Messages API". */
  constructor(target: string) {
    this.#target = target;
  }

  /** A known field of the source format that the target cannot express: it is left out. */
  dropped(path: string, why = `no equivalent in ${this.#target}`): void {
    this.#items.push({ path, message: `${why}; dropped` });
  }

  /** A field that was sent, but not as the client wrote it. */
  changed(path: string, message: string): void {
    this.#items.push({ path, message });
  }

  result(body: JsonObject): RequestTranslation {
    return this.#items.length === 0 ? { body } : { body, warnings: this.#items };
  }
}

/**
 * Adds the carried-over unknown fields after the translated ones; a translated field wins over an
 * unknown field of the same name (which can only be the target format's own field sent to the
 * wrong API), and the loser is reported.
 */
export function withCarriedOver(translated: JsonObject, carried: JsonObject, warnings: Warnings): JsonObject {
  for (const [key, value] of Object.entries(carried)) {
    if (key in translated) warnings.dropped(key, 'conflicts with a field gw translated');
    else translated[key] = value;
  }
  return translated;
}
