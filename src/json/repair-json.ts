// Repairs JSON broken only by raw `"` or `\` inside string values, as firewall templates produce.

/**
 * Walks the text once; inside a string, a `"` ends the string only if what follows it can follow a string
 * in JSON (`,` then a key or the end of the container, `:`, `}`, `]`, or the end of the text). Any other
 * `"` is escaped, and so is a `\` that does not start a valid escape. Returns null when nothing changed, or
 * when more than `maxEdits` characters would need escaping: that is no template's output, and the work and
 * the copy stay bounded (4 MB of `"x` would otherwise be 2 million edits).
 */
export function repairUnescapedQuotes(text: string, maxEdits = MAX_REPAIR_EDITS): string | null {
  const n = text.length;
  let out = '';
  let start = 0;
  let inString = false;
  let edits = 0;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (!inString) {
      if (c === QUOTE) inString = true;
      continue;
    }
    if (c === BACKSLASH) {
      const next = text.charCodeAt(i + 1);
      if (next === QUOTE && closesString(text, i + 1)) {
        // `"C:\"` : the backslash is the value's last character, the quote ends the string.
        out += `${text.slice(start, i)}\\\\`;
        start = i + 1;
        if (++edits > maxEdits) return null;
      } else if (isEscape(text, i + 1)) {
        i++;
      } else {
        out += `${text.slice(start, i)}\\\\`;
        start = i + 1;
        if (++edits > maxEdits) return null;
      }
      continue;
    }
    if (c === QUOTE) {
      if (closesString(text, i)) {
        inString = false;
      } else {
        out += `${text.slice(start, i)}\\"`;
        start = i + 1;
        if (++edits > maxEdits) return null;
      }
    }
  }
  return edits > 0 ? out + text.slice(start) : null;
}

/** A batch of 1000 records with a few raw quotes or backslashes each stays well under this. */
export const MAX_REPAIR_EDITS = 10_000;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

function isEscape(text: string, at: number): boolean {
  const c = text[at];
  if (c === undefined) return false;
  if ('"\\/bfnrt'.includes(c)) return true;
  return c === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(at + 1, at + 5));
}

function skipSpace(text: string, from: number): number {
  let i = from;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) break;
    i++;
  }
  return i;
}

function closesString(text: string, quoteAt: number): boolean {
  const j = skipSpace(text, quoteAt + 1);
  if (j >= text.length) return true;
  const c = text[j];
  if (c === ':' || c === '}' || c === ']') return true;
  if (c !== ',') return false;
  const k = skipSpace(text, j + 1);
  const d = text[k];
  // After a comma comes the next key, or (in arrays) the next record or value.
  return d === '"' || d === '{' || d === '[' || d === undefined || /[-0-9tfn]/.test(d);
}
