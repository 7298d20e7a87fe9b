// Finds where a text stops being valid JSON, in one pass (error path only: V8's messages often omit it).

const OBJECT = 1;
const ARRAY = 0;

enum Want {
  Value,
  ValueOrClose,
  Key,
  KeyOrClose,
  After,
}

/**
 * Index of the first character at which `text` stops being JSON (`text.length` when it ends too early),
 * or -1 when it is valid. Linear in the text: a body that fails to parse costs about what a good one does.
 */
export function jsonErrorPosition(text: string): number {
  const n = text.length;
  const stack: number[] = [];
  let want: Want = Want.Value;
  let i = 0;
  for (;;) {
    i = skipSpace(text, i);
    if (want === Want.After) {
      if (stack.length === 0) return i >= n ? -1 : i;
      if (i >= n) return n;
      const c = text.charCodeAt(i);
      const top = stack[stack.length - 1];
      if (c === 0x2c) {
        want = top === OBJECT ? Want.Key : Want.Value;
        i++;
      } else if ((top === OBJECT && c === 0x7d) || (top === ARRAY && c === 0x5d)) {
        stack.pop();
        i++;
      } else return i;
      continue;
    }
    if (i >= n) return n;
    const c = text.charCodeAt(i);
    if (want === Want.Key || want === Want.KeyOrClose) {
      if (want === Want.KeyOrClose && c === 0x7d) {
        stack.pop();
        want = Want.After;
        i++;
        continue;
      }
      if (c !== 0x22) return i;
      const end = stringEnd(text, i);
      if (end < 0) return ~end;
      i = skipSpace(text, end);
      if (i >= n) return n;
      if (text.charCodeAt(i) !== 0x3a) return i;
      want = Want.Value;
      i++;
      continue;
    }
    if (want === Want.ValueOrClose && c === 0x5d) {
      stack.pop();
      want = Want.After;
      i++;
    } else if (c === 0x7b) {
      stack.push(OBJECT);
      want = Want.KeyOrClose;
      i++;
    } else if (c === 0x5b) {
      stack.push(ARRAY);
      want = Want.ValueOrClose;
      i++;
    } else {
      const end = c === 0x22 ? stringEnd(text, i) : scalarEnd(text, i, c);
      if (end < 0) return ~end;
      want = Want.After;
      i = end;
    }
  }
}

function skipSpace(text: string, from: number): number {
  let i = from;
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
  }
  return i;
}

const HEX = /^[0-9a-fA-F]{4}$/;

/** End (exclusive) of the string starting at `from`, or ~position of the error. */
function stringEnd(text: string, from: number): number {
  for (let i = from + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) return i + 1;
    if (c < 0x20) return ~i;
    if (c === 0x5c) {
      const e = text[i + 1];
      if (e === 'u') {
        if (!HEX.test(text.slice(i + 2, i + 6))) return ~Math.min(i + 2, text.length);
        i += 5;
      } else if (e !== undefined && '"\\/bfnrt'.includes(e)) i++;
      else return ~(i + 1);
    }
  }
  return ~text.length;
}

const LITERALS = ['true', 'false', 'null'];

/** First index at or after `at` that is not an ASCII digit. */
function digitsEnd(text: string, at: number): number {
  let j = at;
  while (j < text.length) {
    const d = text.charCodeAt(j);
    if (d < 0x30 || d > 0x39) break;
    j++;
  }
  return j;
}

/** End of a literal or number starting at `from`, or ~position of the error. No allocation: called per value. */
function scalarEnd(text: string, from: number, c: number): number {
  for (let w = 0; w < LITERALS.length; w++) {
    const word = LITERALS[w] as string;
    if (c === word.charCodeAt(0)) {
      for (let k = 1; k < word.length; k++) {
        if (text.charCodeAt(from + k) !== word.charCodeAt(k)) return ~(from + k);
      }
      return from + word.length;
    }
  }
  let i = from;
  if (text.charCodeAt(i) === 0x2d) i++;
  if (text.charCodeAt(i) === 0x30) i++;
  else {
    const j = digitsEnd(text, i);
    if (j === i) return ~i;
    i = j;
  }
  if (text.charCodeAt(i) === 0x2e) {
    const j = digitsEnd(text, i + 1);
    if (j === i + 1) return ~j;
    i = j;
  }
  const e = text.charCodeAt(i);
  if (e === 0x65 || e === 0x45) {
    i++;
    const s = text.charCodeAt(i);
    if (s === 0x2b || s === 0x2d) i++;
    const j = digitsEnd(text, i);
    if (j === i) return ~j;
    i = j;
  }
  return i;
}
