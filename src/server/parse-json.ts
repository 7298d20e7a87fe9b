// Parses a request body as JSON: strict UTF-8, prototype-poisoning keys refused, firewall quoting repaired.
import { isUtf8 } from 'node:buffer';
import secureJson from 'secure-json-parse';
import { ThreatcolError } from '../errors.js';
import { repairUnescapedQuotes } from './repair-json.js';

export interface ParsedBody {
  value: unknown;
  repaired: boolean;
}

const POISON = { protoAction: 'error', constructorAction: 'error' } as const;

/** Deeper than any record needs; a deeper body is refused before JSON.parse builds it (200k `[` cost ~150 MB). */
export const MAX_JSON_DEPTH = 64;

/**
 * `allowRepair`: firewalls paste variable values into their template without JSON escaping, so a body
 * that is invalid only because a value holds a raw `"` or `\` is repaired (and marked so).
 */
export function parseJsonBody(body: Buffer, allowRepair: boolean): ParsedBody {
  if (!isUtf8(body)) throw new ThreatcolError('INVALID_JSON', 'the body is not valid UTF-8');
  let text = body.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const tooDeep = depthExceededAt(text, MAX_JSON_DEPTH);
  if (tooDeep !== -1) {
    throw new ThreatcolError('INVALID_JSON', `the body is nested deeper than ${MAX_JSON_DEPTH} levels`, {
      details: [{ path: '', message: `nested deeper than ${MAX_JSON_DEPTH} levels`, position: tooDeep }],
    });
  }
  try {
    return { value: parseSecure(text), repaired: false };
  } catch (error) {
    if (error instanceof ThreatcolError) throw error;
    const original = error as SyntaxError;
    if (allowRepair) {
      const fixed = repairUnescapedQuotes(text);
      if (fixed !== null) {
        try {
          return { value: parseSecure(fixed), repaired: true };
        } catch (second) {
          if (second instanceof ThreatcolError) throw second;
        }
      }
    }
    throw invalidJson(original, text);
  }
}

/** Position of the first `[` or `{` (outside strings) beyond `limit` levels, or -1. */
function depthExceededAt(text: string, limit: number): number {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return i;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return -1;
}

function parseSecure(text: string): unknown {
  const value = JSON.parse(text);
  // Only objects can carry poisoned keys, and only if the text spells them out or escapes characters
  // (`"\u005f_proto__"` is `__proto__` too): the scan is skipped otherwise.
  if (
    value !== null &&
    typeof value === 'object' &&
    (text.includes('__proto__') || text.includes('constructor') || text.includes('\\u'))
  ) {
    try {
      secureJson.scan(value, POISON);
    } catch {
      throw new ThreatcolError(
        'INVALID_JSON',
        'the body holds a forbidden key (__proto__ or constructor.prototype)',
        {
          details: [{ path: '', message: 'forbidden key' }],
        },
      );
    }
  }
  return value;
}

function invalidJson(error: SyntaxError, text: string): ThreatcolError {
  const match = /position (\d+)/.exec(error.message);
  const position = match ? Number(match[1]) : errorPosition(text);
  const reason = error.message.replace(/^Unexpected/, 'unexpected').replace(/, ".*" is not valid JSON$/s, '');
  return new ThreatcolError('INVALID_JSON', `the body is not valid JSON at position ${position}`, {
    details: [{ path: '', message: reason.slice(0, 200), position }],
  });
}

/**
 * Where parsing fails, for V8 messages that carry no position ("Unexpected token"): the shortest prefix
 * whose error is not "end of input" ends at the bad character. Binary search: O(n log n), error path only.
 */
function errorPosition(text: string): number {
  const failsInside = (end: number): boolean => {
    try {
      JSON.parse(text.slice(0, end));
      return false;
    } catch (error) {
      const message = (error as Error).message;
      const at = /position (\d+)/.exec(message);
      if (at) return Number(at[1]) < end;
      return !message.includes('end of JSON input');
    }
  };
  if (!failsInside(text.length)) return text.length;
  let lo = 1;
  let hi = text.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (failsInside(mid)) hi = mid;
    else lo = mid + 1;
  }
  return lo - 1;
}
