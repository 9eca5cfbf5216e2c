// What a Gemini client's URL says that its body does not: the model and the method
// (/v1beta/models/{model}:generateContent, :streamGenerateContent, :countTokens; Vertex AI's
// .../publishers/google/models/{model}:method alike). gw reads the model into the body it works
// on (as `model`, where routing, GwModel matching, model aliases and the access log read every
// format's model), and the method tells a stream from a whole answer.

/** The Gemini methods gw serves, as the URL's `:method` suffix names them. */
export type GeminiMethod = 'generateContent' | 'streamGenerateContent' | 'countTokens';

const METHODS: ReadonlySet<string> = new Set<GeminiMethod>(['generateContent', 'streamGenerateContent', 'countTokens']);

export interface GeminiCall {
  /** The model id of the path (`gemini-2.5-flash`); undefined when the path names none. */
  model: string | undefined;
  method: GeminiMethod | undefined;
}

/**
 * The model and method of a Gemini path (no query). The method is the last segment's suffix after
 * its last `:` when that is a method gw knows; the model is the segment after `models/` without
 * it (a model id may hold other colons, such as a tag, which stay part of it).
 */
export function geminiCall(path: string): GeminiCall {
  const slash = path.lastIndexOf('/');
  let segment = path.slice(slash + 1);
  let method: GeminiMethod | undefined;
  const colon = segment.lastIndexOf(':');
  if (colon !== -1 && METHODS.has(segment.slice(colon + 1))) {
    method = segment.slice(colon + 1) as GeminiMethod;
    segment = segment.slice(0, colon);
  }
  const parent = path.slice(0, Math.max(slash, 0));
  const named = parent.endsWith('/models') || parent === 'models';
  let model: string | undefined;
  if (named && segment !== '') {
    try {
      model = decodeURIComponent(segment);
    } catch {
      model = segment;
    }
  }
  return { model, method };
}
