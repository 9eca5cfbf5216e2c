// Collects what a request translation dropped or changed, for the proxy to log or report. The
// writer of the target format owns it: it names the target in its messages, and reports the
// form's Dropped notes where they stand, so that warnings come in the order of the source body.
import type { Dropped } from './form/types.ts';
import type { JsonObject, RequestTranslation, TranslationWarning } from './types.ts';

/** How a target format is named in warnings: `the Messages API` in full, `Messages` before "equivalent". */
export interface TargetName {
  full: string;
  short: string;
}

export class Warnings {
  readonly #items: TranslationWarning[] = [];
  readonly #target: TargetName;

  constructor(target: TargetName) {
    this.#target = target;
  }

  /** A known field of the source format that the target cannot express: it is left out. */
  dropped(path: string, why = `no equivalent in ${this.#target.full}`): void {
    this.#items.push({ path, message: `${why}; dropped` });
  }

  /** Something the target format has no equivalent for, named (`audio input`). */
  droppedWithout(path: string, what: string): void {
    this.dropped(path, `${what} has no ${this.#target.short} equivalent`);
  }

  /** A field that was sent, but not as the client wrote it. */
  changed(path: string, message: string): void {
    this.#items.push({ path, message });
  }

  /** Reports the form's notes of what the reader could not place. */
  report(notes: readonly Dropped[] | undefined): void {
    if (notes === undefined) return;
    for (const note of notes) {
      if (note.why !== undefined) this.dropped(note.path, note.why);
      else if (note.what !== undefined) this.droppedWithout(note.path, note.what);
      else this.dropped(note.path);
    }
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
  for (const key in carried) {
    if (key in translated) warnings.dropped(key, 'conflicts with a field gw translated');
    else translated[key] = carried[key];
  }
  return translated;
}

/** Copies a source node's unknown fields onto its target node, where the target has no such field yet. */
export function withExtra(target: JsonObject, extra: JsonObject | undefined): JsonObject {
  if (extra !== undefined) for (const key in extra) if (!(key in target)) target[key] = extra[key];
  return target;
}
