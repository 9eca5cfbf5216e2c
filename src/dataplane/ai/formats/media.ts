// Inline bytes in URLs: OpenAI carries images and files as URLs, data: URLs for inline bytes,
// where the chat form (and Anthropic) hold base64 data with its media type.
import type { MediaSource } from './form/types.ts';

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

/** An OpenAI image or file URL in the form: a base64 data: URL is inline bytes, anything else a URL. */
export function mediaSourceOfUrl(url: string): MediaSource {
  const inline = parseBase64DataUrl(url);
  return inline ? { kind: 'base64', mediaType: inline.mediaType, data: inline.data } : { kind: 'url', url };
}
