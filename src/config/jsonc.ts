// Strips // and /* */ comments and trailing commas from JSON text (outside strings), so config files can explain
// themselves and the package's conffile, every key commented out, can be uncommented line by line.

/**
 * Returns `text` with comments, and commas that only a `}` or `]` follows, replaced by spaces; positions and line
 * numbers stay as they were. An unterminated block comment throws (a SyntaxError naming its line): silently
 * dropping the rest of a file would hide keys.
 */
export function stripJsonComments(text: string): string {
  let out = '';
  let i = 0;
  let start = 0;
  const n = text.length;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      i++;
      while (i < n) {
        const s = text.charCodeAt(i);
        if (s === 0x5c /* \ */) i += 2;
        else if (s === 0x22) {
          i++;
          break;
        } else i++;
      }
      continue;
    }
    if (c === 0x2f /* / */ && i + 1 < n) {
      const next = text.charCodeAt(i + 1);
      if (next === 0x2f || next === 0x2a) {
        out += text.slice(start, i);
        const end = next === 0x2f ? lineEnd(text, i) : blockEnd(text, i);
        out += text.slice(i, end).replace(/[^\n]/g, ' ');
        i = end;
        start = i;
        continue;
      }
    }
    i++;
  }
  return dropTrailingCommas(out + text.slice(start));
}

/** `{"a": 1,}` -> `{"a": 1 }`: the comma an uncommented last line leaves behind (comments are spaces by now). */
function dropTrailingCommas(text: string): string {
  let out = '';
  let start = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      for (i++; i < n && text.charCodeAt(i) !== 0x22; i++) if (text.charCodeAt(i) === 0x5c) i++;
      continue;
    }
    if (c !== 0x2c /* , */) continue;
    let j = i + 1;
    while (j < n && /\s/.test(text[j] as string)) j++;
    if (text[j] === '}' || text[j] === ']') {
      out += `${text.slice(start, i)} `;
      start = i + 1;
    }
  }
  return out + text.slice(start);
}

function lineEnd(text: string, from: number): number {
  const nl = text.indexOf('\n', from);
  return nl === -1 ? text.length : nl;
}

function blockEnd(text: string, from: number): number {
  const close = text.indexOf('*/', from + 2);
  if (close === -1) {
    const line = text.slice(0, from).split('\n').length;
    throw new SyntaxError(`unterminated /* comment starting on line ${line}`);
  }
  return close + 2;
}
