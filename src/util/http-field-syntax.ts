// The character rules of HTTP field names and values (RFC 9110 section 5): what gw writes
// upstream, what it reads back, and what policies and external services may set.

/** A field name (and a method): a token. */
export const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** A character a field value may not hold: anything but tab, visible ASCII, space and obs-text. */
export const INVALID_FIELD_VALUE = /[^\t\x20-\x7e\x80-\xff]/;
