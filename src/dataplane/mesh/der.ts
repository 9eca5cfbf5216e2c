// A DER encoder of the few ASN.1 types a certificate signing request needs (ITU-T X.690):
// node:crypto signs and parses certificates but cannot write a CSR. Each function returns one
// complete element (tag, length, contents).

function lengthBytes(length: number): Uint8Array {
  if (length < 0x80) return Uint8Array.of(length);
  const bytes: number[] = [];
  for (let rest = length; rest > 0; rest = Math.floor(rest / 256)) bytes.unshift(rest % 256);
  return Uint8Array.of(0x80 | bytes.length, ...bytes);
}

/** An element of tag `tag` around `contents`. */
export function element(tag: number, ...contents: Uint8Array[]): Uint8Array {
  const body = Buffer.concat(contents);
  return Buffer.concat([Uint8Array.of(tag), lengthBytes(body.length), body]);
}

export const sequence = (...items: Uint8Array[]) => element(0x30, ...items);
export const set = (...items: Uint8Array[]) => element(0x31, ...items);
export const octetString = (bytes: Uint8Array) => element(0x04, bytes);
export const booleanTrue = () => element(0x01, Uint8Array.of(0xff));
/** A BIT STRING of whole bytes (no unused bits). */
export const bitString = (bytes: Uint8Array) => element(0x03, Uint8Array.of(0), bytes);

/** A non-negative INTEGER below 128 (a version number). */
export function smallInteger(value: number): Uint8Array {
  if (!Number.isInteger(value) || value < 0 || value > 127) throw new RangeError(`smallInteger ${value}`);
  return element(0x02, Uint8Array.of(value));
}

/** An OBJECT IDENTIFIER from its dotted form. */
export function objectIdentifier(dotted: string): Uint8Array {
  const arcs = dotted.split('.').map(Number);
  if (arcs.length < 2 || arcs.some((arc) => !Number.isSafeInteger(arc) || arc < 0))
    throw new RangeError(`object identifier ${dotted}`);
  const bytes: number[] = [];
  const base128 = (value: number) => {
    const groups = [value % 128];
    for (let rest = Math.floor(value / 128); rest > 0; rest = Math.floor(rest / 128))
      groups.unshift(0x80 | (rest % 128));
    bytes.push(...groups);
  };
  base128(arcs[0]! * 40 + arcs[1]!);
  for (const arc of arcs.slice(2)) base128(arc);
  return element(0x06, Uint8Array.from(bytes));
}

/** A context-specific constructed element [n] (IMPLICIT: the contents are the inner elements). */
export const contextConstructed = (n: number, ...contents: Uint8Array[]) => element(0xa0 | n, ...contents);
/** A context-specific primitive element [n] IMPLICIT over `bytes`. */
export const contextPrimitive = (n: number, bytes: Uint8Array) => element(0x80 | n, bytes);
