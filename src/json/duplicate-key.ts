// Finds the first key repeated within one JSON object (JSON.parse silently keeps the last one).

interface Frame {
  /** Keys seen so far in an object; null for an array. */
  keys: Set<string> | null;
  /** JSON pointer of this container. */
  path: string;
  /** Array: index of the current element. Object: the current key. */
  at: number | string;
}

/** The first duplicate key of a valid JSON text, with its JSON pointer and position; null when there is none. */
export function findDuplicateKey(text: string): { key: string; path: string; position: number } | null {
  const stack: Frame[] = [];
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const top = stack[stack.length - 1];
    if (c === 0x22) {
      const start = i;
      for (i++; text.charCodeAt(i) !== 0x22; i++) if (text.charCodeAt(i) === 0x5c) i++;
      if (expectKey && top?.keys) {
        const raw = text.slice(start, i + 1);
        const key = raw.includes('\\') ? (JSON.parse(raw) as string) : raw.slice(1, -1);
        if (top.keys.has(key)) return { key, path: `${top.path}/${escapePointer(key)}`, position: start };
        top.keys.add(key);
        top.at = key;
        expectKey = false;
      }
    } else if (c === 0x7b || c === 0x5b) {
      const path = top === undefined ? '' : `${top.path}/${escapePointer(String(top.at))}`;
      stack.push({ keys: c === 0x7b ? new Set() : null, path, at: 0 });
      expectKey = c === 0x7b;
    } else if (c === 0x7d || c === 0x5d) {
      stack.pop();
    } else if (c === 0x2c && top !== undefined) {
      if (top.keys) expectKey = true;
      else top.at = (top.at as number) + 1;
    }
  }
  return null;
}

function escapePointer(segment: string): string {
  return segment.replaceAll('~', '~0').replaceAll('/', '~1');
}
