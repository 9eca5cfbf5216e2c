// Images and documents: OpenAI carries them as URLs (data: URLs for inline bytes), Anthropic as a
// source object (base64 with a media type, or a url).
import { isPlainObject, stringOr } from './json.ts';
import type { JsonObject } from './types.ts';

export interface Base64Data {
  mediaType: string;
  data: string;
}

/** The media type and base64 payload of a `data:<type>;base64,<data>` URL; undefined otherwise. */
export function parseBase64DataUrl(url: string): Base64Data | undefined {
  if (!url.startsWith('data:')) return undefined;
  // indexOf rather than a regular expression: the payload can be megabytes long.
  const comma = url.indexOf(',');
  if (comma === -1) return undefined;
  const header = url.slice(5, comma).split(';');
  if (header.at(-1)?.toLowerCase() !== 'base64') return undefined;
  const mediaType = header[0] ?? '';
  if (mediaType === '') return undefined;
  return { mediaType: mediaType.toLowerCase(), data: url.slice(comma + 1) };
}

export function base64DataUrl(mediaType: string, data: string): string {
  return `data:${mediaType};base64,${data}`;
}

function isHttpUrl(url: string): boolean {
  return /^https?:\/\//i.test(url);
}

/**
 * An Anthropic image source for an OpenAI image URL, or undefined when it cannot be one (a data:
 * URL that is not base64, another scheme).
 */
export function imageSourceForUrl(url: string): JsonObject | undefined {
  const inline = parseBase64DataUrl(url);
  if (inline) return { type: 'base64', media_type: inline.mediaType, data: inline.data };
  if (isHttpUrl(url)) return { type: 'url', url };
  return undefined;
}

/** The OpenAI image URL for an Anthropic image or PDF source; undefined for file sources. */
export function urlForSource(source: unknown): string | undefined {
  if (!isPlainObject(source)) return undefined;
  if (source.type === 'base64') {
    const mediaType = stringOr(source.media_type);
    const data = stringOr(source.data);
    return mediaType !== undefined && data !== undefined ? base64DataUrl(mediaType, data) : undefined;
  }
  if (source.type === 'url') return stringOr(source.url);
  return undefined;
}
