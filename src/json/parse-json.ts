// Parses a request body as JSON: strict UTF-8, bounded depth, duplicate and prototype-poisoning keys refused,
// firewall quoting repaired (and the repaired text held to the same limits).
import { isAscii, isUtf8 } from 'node:buffer';
import { ThreatcolError } from '../errors.js';
import { findDuplicateKey } from './duplicate-key.js';
import { jsonErrorPosition } from './json-error-position.js';
import { repairUnescapedQuotes } from './repair-json.js';

export interface ParsedBody {
  value: unknown;
  repaired: boolean;
  /** Length of the longest record's text (the body, or the longest object in a top-level array). */
  recordSpan: number;
  /**
   * Each record's JSON text as received (the body's object, or each object of a top-level array), in order;
   * null when the body spans several lines (a stored line must stay one line) or is not such a body.
   */
  recordTexts: string[] | null;
  /**
   * The texts are exactly what JSON.stringify gives for their parsed records (no whitespace, no escapes, only
   * integers of at most 15 digits, no key starting with a digit), so a key over the canonical form may hash
   * the text itself. False whenever that is not certain.
   */
  textsCanonical: boolean;
  /**
   * The body is ASCII and holds no escape (no backslash), so every string JSON.parse made of it is ASCII too:
   * text built from them may be encoded as latin1, byte for byte its UTF-8.
   */
  ascii: boolean;
  /**
   * The text holds a backslash. Without one, no string JSON.parse made of it holds a quote, a backslash or a
   * control character (they cannot appear raw in JSON strings), nor a lone surrogate (UTF-8 cannot carry one):
   * none needs escaping when written back as JSON.
   */
  escapes: boolean;
}

function forbiddenKey(): ThreatcolError {
  return new ThreatcolError(
    'INVALID_JSON',
    'the body holds a forbidden key (__proto__ or constructor.prototype)',
    {
      details: [{ path: '', message: 'forbidden key' }],
    },
  );
}

/** Deeper than any record needs; a deeper body is refused before JSON.parse builds it (200k `[` cost ~150 MB). */
export const MAX_JSON_DEPTH = 64;

/**
 * `allowRepair`: firewalls paste variable values into their template without JSON escaping, so a body
 * that is invalid only because a value holds a raw `"` or `\` is repaired (and marked so).
 */
export function parseJsonBody(body: Buffer, allowRepair: boolean): ParsedBody {
  // ASCII (nearly every body) is UTF-8 too: one check instead of two.
  const ascii = isAscii(body);
  if (!ascii && !isUtf8(body)) throw new ThreatcolError('INVALID_JSON', 'the body is not valid UTF-8');
  let text = ascii ? body.toString('latin1') : body.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  try {
    return parsedBody(text, parseChecked(text), false, ascii);
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error;
    if (allowRepair) {
      const fixed = repairUnescapedQuotes(text);
      if (fixed !== null) {
        try {
          // The repaired text is a new body: depth, duplicates and poisoning are checked on it again.
          return parsedBody(fixed, parseChecked(fixed), true, false);
        } catch (second) {
          if (!(second instanceof SyntaxError)) throw second;
        }
      }
    }
    throw invalidJson(error, text);
  }
}

/** JSON.parse behind every limit; throws ThreatcolError for a refused body, SyntaxError for invalid JSON. */
function parseChecked(text: string): unknown {
  scanShape(text, MAX_JSON_DEPTH);
  if (shape.tooDeepAt !== -1) {
    throw new ThreatcolError('INVALID_JSON', `the body is nested deeper than ${MAX_JSON_DEPTH} levels`, {
      details: [
        { path: '', message: `nested deeper than ${MAX_JSON_DEPTH} levels`, position: shape.tooDeepAt },
      ],
    });
  }
  const members = shape.members;
  const value: unknown = JSON.parse(text);
  // One walk over the parsed value counts its keys and looks for poisoned ones: an own `__proto__` key, or a
  // `constructor` object with a `prototype` key (what secure-json-parse refuses; JSON.parse has decoded any
  // escaped spelling by now, so comparing the keys is enough). test/unit/parse-json.test.ts holds the two equal.
  walk.keys = 0;
  walk.poisoned = false;
  walkKeys(value);
  if (walk.poisoned) throw forbiddenKey();
  // Every `:` outside strings is one member; JSON.parse keeps only the last of duplicate keys, so fewer keys
  // than members means a duplicate, which is then looked for (error path only).
  if (members > 0 && walk.keys !== members) {
    const dup = findDuplicateKey(text);
    if (dup !== null) {
      throw new ThreatcolError(
        'INVALID_JSON',
        `the body repeats the key ${JSON.stringify(dup.key.slice(0, 64))}`,
        {
          details: [{ path: dup.path.slice(0, 200), message: 'duplicate key', position: dup.position }],
        },
      );
    }
  }
  return value;
}

/** The answer for `text` just parsed by parseChecked (its scan's findings are still in `shape`). */
function parsedBody(text: string, value: unknown, repaired: boolean, ascii: boolean): ParsedBody {
  return {
    value,
    repaired,
    recordSpan: shape.recordSpan,
    recordTexts: recordTexts(text, value),
    textsCanonical: shape.canonical,
    ascii: ascii && !shape.escapes,
    escapes: shape.escapes,
  };
}

/** What one pass over the text found; reused, parsing is synchronous. */
const shape = {
  tooDeepAt: -1,
  members: 0,
  recordSpan: 0,
  starts: [] as number[],
  ends: [] as number[],
  canonical: false,
  /** A backslash anywhere in the text. */
  escapes: false,
};

/** The records' texts, from the spans scanShape found, when they are one per record and on one line. */
function recordTexts(text: string, value: unknown): string[] | null {
  const n = shape.starts.length;
  if (
    n !== (Array.isArray(value) ? value.length : 1) ||
    text.indexOf('\n') !== -1 ||
    text.indexOf('\r') !== -1
  ) {
    return null;
  }
  const texts: string[] = new Array(n);
  for (let i = 0; i < n; i++) texts[i] = text.slice(shape.starts[i], (shape.ends[i] as number) + 1);
  return texts;
}

/**
 * One pass outside strings: the first `[`/`{` beyond `limit` levels, the number of `:` (object members),
 * the longest record (the top-level object, or objects directly in a top-level array), and whether the text
 * is certainly JSON.stringify's own spelling of what it parses to (see ParsedBody.textsCanonical). Strings,
 * most of a body's bytes, are stepped over with indexOf (native) from quote to quote rather than a character
 * at a time; a backslash, found the same way, only moves the search past the character it escapes. The text
 * need not be valid JSON (JSON.parse judges that after): a string without its closing quote ends the scan.
 * Exported for its property test, which holds it to a character-at-a-time scan.
 */
export function scanShape(text: string, limit: number): Readonly<typeof shape> {
  let depth = 0;
  let members = 0;
  let recordDepth = 1;
  let recordStart = 0;
  let recordSpan = 0;
  let canonical = true;
  // The next backslash at or after the scan (-1: none left); most bodies have none, so one search in all.
  let backslash = text.indexOf('\\');
  shape.escapes = backslash !== -1;
  const starts = shape.starts;
  const ends = shape.ends;
  starts.length = 0;
  ends.length = 0;
  shape.tooDeepAt = -1;
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      const open = i;
      let close = text.indexOf('"', i + 1);
      while (backslash !== -1 && backslash < close) {
        if (backslash < open) backslash = text.indexOf('\\', open);
        else {
          // An escape inside this string: JSON.stringify may spell it otherwise (\/, \u0041). The escaped
          // character (maybe a quote or a backslash) is skipped.
          canonical = false;
          const resume = backslash + 2;
          backslash = text.indexOf('\\', resume);
          if (close < resume) close = text.indexOf('"', resume);
        }
      }
      if (close === -1) {
        // Unterminated: JSON.parse refuses the text. (An escape in it still counts, as in the scan's oracle.)
        if (backslash !== -1) canonical = false;
        break;
      }
      // A key starting with a digit may be an array index, which JSON.stringify moves to the front.
      const first = text.charCodeAt(open + 1);
      if (first >= 0x30 && first <= 0x39 && text.charCodeAt(close + 1) === 0x3a) canonical = false;
      i = close;
    } else if (c === 0x3a) members++;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) {
        // Complete, like every answer: nothing of an earlier body's scan is left in it.
        shape.tooDeepAt = i;
        shape.members = members;
        shape.recordSpan = recordSpan;
        shape.canonical = false;
        return shape;
      }
      if (depth === 1 && c === 0x5b) recordDepth = 2;
      else if (depth === recordDepth && c === 0x7b) recordStart = i;
    } else if (c === 0x5d || c === 0x7d) {
      if (depth === recordDepth && c === 0x7d) {
        if (i - recordStart + 1 > recordSpan) recordSpan = i - recordStart + 1;
        starts.push(recordStart);
        ends.push(i);
      }
      depth--;
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      const end = numberEnd(text, i);
      if (canonical && !canonicalInteger(text, i, end)) canonical = false;
      i = end - 1;
    } else if (LITERAL_OR_COMMA[c] !== 1) {
      canonical = false; // whitespace (or anything else JSON.stringify would not write here)
    }
  }
  shape.members = members;
  shape.recordSpan = recordSpan;
  shape.canonical = canonical;
  return shape;
}

/** Characters JSON.stringify writes outside strings besides brackets, colons and numbers: `,` and true/false/null. */
const LITERAL_OR_COMMA = new Uint8Array(128);
for (const ch of ',truefalsn') LITERAL_OR_COMMA[ch.charCodeAt(0)] = 1;

/** The end of the number token starting at `from` (its characters: digits, sign, point, exponent). */
function numberEnd(text: string, from: number): number {
  let i = from + 1;
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (!((c >= 0x30 && c <= 0x39) || c === 0x2e || c === 0x65 || c === 0x45 || c === 0x2b || c === 0x2d))
      break;
  }
  return i;
}

/** -?(0|[1-9][0-9]{0,14}), "-0" excepted: an integer JSON.stringify writes back exactly so. */
function canonicalInteger(text: string, from: number, end: number): boolean {
  let i = from;
  if (text.charCodeAt(i) === 0x2d) i++;
  const digits = end - i;
  if (digits < 1 || digits > 15) return false;
  for (let j = i; j < end; j++) {
    const c = text.charCodeAt(j);
    if (c < 0x30 || c > 0x39) return false;
  }
  if (text.charCodeAt(i) === 0x30) return digits === 1 && i === from; // "0", not "00", "01" or "-0"
  return true;
}

/** What walkKeys found; reused, parsing is synchronous. */
const walk = { keys: 0, poisoned: false };

/**
 * Counts the own keys of every object in a parsed value (for-in: JSON.parse objects inherit nothing
 * enumerable) and marks a poisoned key. Depth is bounded by scanShape, so the recursion is too.
 */
function walkKeys(value: unknown): void {
  if (typeof value !== 'object' || value === null) return;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) walkKeys(value[i]);
    return;
  }
  const object = value as Record<string, unknown>;
  for (const key in object) {
    walk.keys += 1;
    const child = object[key];
    if (key === '__proto__') walk.poisoned = true;
    else if (
      key === 'constructor' &&
      typeof child === 'object' &&
      child !== null &&
      Object.hasOwn(child, 'prototype')
    )
      walk.poisoned = true;
    walkKeys(child);
  }
}

function invalidJson(error: SyntaxError, text: string): ThreatcolError {
  const match = /position (\d+)/.exec(error.message);
  let position = match ? Number(match[1]) : jsonErrorPosition(text);
  if (position < 0) position = text.length;
  const reason = error.message.replace(/^Unexpected/, 'unexpected').replace(/, ".*" is not valid JSON$/s, '');
  return new ThreatcolError('INVALID_JSON', `the body is not valid JSON at position ${position}`, {
    details: [{ path: '', message: reason.slice(0, 200), position }],
  });
}
