// Reads resources from YAML or JSON files, directories or standard input: multi-document
// streams and List kinds, with bounds on size, nesting and aliases so that hostile input gets an
// error instead of a crash or a hang.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import { LineCounter, parseAllDocuments } from 'yaml';
import { unclosedOpenerBefore } from './yaml-position.ts';

/** Largest file read (kube-apiserver itself refuses request bodies over 3 MiB). */
export const MAX_FILE_BYTES = 8 * 1024 * 1024;
/** Deepest nesting of mappings and sequences accepted in a document. */
export const MAX_DEPTH = 64;
const MAX_ALIASES = 100;
const RESOURCE_EXTENSIONS = new Set(['.yaml', '.yml', '.json']);

export interface SourceDocument {
  /** File path, or "-" for standard input. */
  file: string;
  /** 1-based position of the document in its file. */
  document: number;
  /** 1-based position in a List's items, when the object came from a List. */
  item?: number;
  /** 1-based line of the document's start. */
  line?: number;
  value: unknown;
}

export interface LoadProblem {
  file: string;
  document?: number;
  /** 1-based line and column of the problem, when known (a syntax error: where the parser stopped). */
  line?: number;
  column?: number;
  message: string;
}

export interface LoadResult {
  documents: SourceDocument[];
  problems: LoadProblem[];
}

/** "file: document N, item M" — where a document or problem is, as messages print it. */
export function locationOf(place: { file: string; document?: number; item?: number }): string {
  let text = place.file;
  if (place.document !== undefined) text += `: document ${place.document}`;
  if (place.item !== undefined) text += `, item ${place.item}`;
  return text;
}

/** A load problem as one message line: location, line (and column) when known, what is wrong. */
export function describeProblem(problem: LoadProblem): string {
  const column = problem.line && problem.column ? `, column ${problem.column}` : '';
  return `${locationOf(problem)}${problem.line ? ` (line ${problem.line}${column})` : ''}: ${problem.message}`;
}

function depthOf(value: unknown, limit: number): number {
  // Iterative, so that the check itself cannot overflow the stack.
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (depth + 1 > deepest) deepest = depth + 1;
    if (deepest > limit) return deepest;
    for (const child of Array.isArray(node) ? node : Object.values(node)) stack.push([child, depth + 1]);
  }
  return deepest;
}

function isListKind(value: unknown): value is { kind: string; items: unknown } {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const kind = (value as { kind?: unknown }).kind;
  return typeof kind === 'string' && kind.endsWith('List') && 'items' in value;
}

/** Parses one YAML or JSON text into documents (List kinds expanded into their items). */
export function parseResources(text: string, file: string): LoadResult {
  const result: LoadResult = { documents: [], problems: [] };
  let parsed: ReturnType<typeof parseAllDocuments>;
  // Positions are offsets into the whole text; the line counter turns them into lines and columns
  // of the file (not of the document, so a problem in the third document of a stream is at its
  // own line).
  const lines = new LineCounter();
  try {
    parsed = parseAllDocuments(text, { uniqueKeys: true, prettyErrors: false, lineCounter: lines });
  } catch (error) {
    result.problems.push({ file, message: explainParseFailure((error as Error).message) });
    return result;
  }
  const documents = Array.isArray(parsed) ? parsed : [];
  documents.forEach((document, index) => {
    const position = index + 1;
    // The document's first content line (its range starts after a "---" line's end).
    const line = document.contents?.range
      ? lines.linePos(document.contents.range[0]).line
      : document.range
        ? lines.linePos(document.range[0]).line
        : undefined;
    if (document.errors.length > 0) {
      // The parser's position of the first error: where it could no longer read the text.
      const first = document.errors[0]!;
      // Only an unclosed quote or flow collection is noticed away from where it opened.
      const unclosed = first.code === 'MISSING_CHAR' || (first.code === 'BAD_INDENT' && /^Flow /.test(first.message));
      const opener = unclosed ? unclosedOpenerBefore(text, first.pos[0]) : undefined;
      const at = lines.linePos(opener?.offset ?? first.pos[0]);
      const stopped = lines.linePos(first.pos[0]);
      const message = opener
        ? `${explainParseFailure(first.message)}: what opens here is never closed with ${opener.missing} (the parser gave up at line ${stopped.line}, column ${stopped.col})`
        : explainParseFailure(first.message);
      result.problems.push({ file, document: position, line: at.line, column: at.col, message });
      return;
    }
    let value: unknown;
    try {
      value = document.toJS({ maxAliasCount: MAX_ALIASES });
    } catch (error) {
      result.problems.push({ file, document: position, line, message: explainParseFailure((error as Error).message) });
      return;
    }
    if (value === null || value === undefined) return; // an empty document, as between two "---"
    if (depthOf(value, MAX_DEPTH) > MAX_DEPTH) {
      result.problems.push({
        file,
        document: position,
        line,
        message: `the document nests deeper than ${MAX_DEPTH} levels; no resource of this API is that deep`,
      });
      return;
    }
    if (isListKind(value)) {
      if (!Array.isArray(value.items)) {
        result.problems.push({ file, document: position, line, message: `${value.kind}: items must be a list` });
        return;
      }
      value.items.forEach((item, itemIndex) => {
        result.documents.push({ file, document: position, item: itemIndex + 1, line, value: item });
      });
      return;
    }
    result.documents.push({ file, document: position, line, value });
  });
  return result;
}

function explainParseFailure(message: string): string {
  const firstLine = message.split('\n')[0]!;
  if (/Maximum call stack size exceeded/.test(firstLine)) {
    return `the document nests too deeply to parse; no resource of this API nests more than ${MAX_DEPTH} levels`;
  }
  return `malformed YAML/JSON: ${firstLine}`;
}

function listFiles(directory: string, recursive: boolean): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(directory, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) {
      if (recursive) files.push(...listFiles(path, true));
    } else if (RESOURCE_EXTENSIONS.has(extname(entry.name))) {
      files.push(path);
    }
  }
  return files;
}

/** The files named by paths: files as given, directories' .yaml/.yml/.json files, "-" for stdin. */
export function resolveFiles(paths: string[], recursive = false): { files: string[]; problems: LoadProblem[] } {
  const files: string[] = [];
  const problems: LoadProblem[] = [];
  for (const path of paths) {
    if (path === '-') {
      files.push('-');
      continue;
    }
    let isDirectory: boolean;
    try {
      isDirectory = statSync(path).isDirectory();
    } catch {
      problems.push({ file: path, message: 'no such file or directory' });
      continue;
    }
    if (isDirectory) files.push(...listFiles(path, recursive));
    else files.push(path);
  }
  return { files, problems };
}

/** Reads and parses one file ("-" for standard input), within the size bound. */
export function loadFile(file: string, stdin?: () => string): LoadResult {
  let text: string;
  try {
    if (file === '-') {
      text = stdin ? stdin() : readFileSync(0, 'utf8');
    } else {
      const size = statSync(file).size;
      if (size > MAX_FILE_BYTES) {
        return {
          documents: [],
          problems: [
            {
              file,
              message: `the file is ${size} bytes; gw reads files of at most ${MAX_FILE_BYTES} bytes (split it)`,
            },
          ],
        };
      }
      text = readFileSync(file, 'utf8');
    }
  } catch (error) {
    return { documents: [], problems: [{ file, message: `cannot read: ${(error as Error).message}` }] };
  }
  if (text.length > MAX_FILE_BYTES) {
    return {
      documents: [],
      problems: [{ file, message: `the input is larger than ${MAX_FILE_BYTES} bytes (split it)` }],
    };
  }
  return parseResources(text, file);
}

/** Reads files, directories (their .yaml, .yml and .json files) or "-" for standard input. */
export function loadResources(
  paths: string[],
  options: { recursive?: boolean; stdin?: () => string } = {},
): LoadResult {
  const { files, problems } = resolveFiles(paths, options.recursive ?? false);
  const result: LoadResult = { documents: [], problems };
  for (const file of files) {
    const loaded = loadFile(file, options.stdin);
    result.documents.push(...loaded.documents);
    result.problems.push(...loaded.problems);
  }
  return result;
}
