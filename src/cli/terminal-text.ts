// Text from outside (senders, the store, the registry, a server's answer) made safe for the admin's terminal:
// the one cleaning every field the CLI prints goes through.

// biome-ignore lint/suspicious/noControlCharactersInRegex: these are exactly the characters refused
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
// JSON.stringify already escapes C0 controls; C1, DEL and bidi controls pass through it raw.
const UNSAFE_IN_JSON = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
// A stored line is any valid JSON: outside strings, tab and carriage return are whitespace, and CR moves the cursor.
const RAW_WHITESPACE = /[\t\r]/g;

/**
 * One field for a line of output: no escape sequences, line breaks or bidi controls (a sender must not be
 * able to retitle or clear the terminal, forge a line, or reorder what the admin reads).
 */
export function clean(value: unknown): string {
  return asText(value).replace(UNSAFE, '?');
}

/** Any value as text, never throwing: a parsed object may carry a `toString` that is not a function. */
function asText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value !== 'object') return String(value);
  try {
    return String(value);
  } catch {
    return JSON.stringify(value) ?? '';
  }
}

/** A whole text of lines for the terminal: as clean() but keeping its line feeds. */
export function cleanText(text: string): string {
  return text.split('\n').map(clean).join('\n');
}

/** C1 and bidi controls replaced: what JSON quoting (pino-pretty's too) leaves raw; C0 and ESC stay. */
export function cleanC1(text: string): string {
  return text.replace(UNSAFE_IN_JSON, '?');
}

/** A stored line for `--json`: C1 and bidi controls escaped (still valid JSON), so no terminal acts on them. */
export function safeJsonLine(line: string): string {
  return line
    .replace(UNSAFE_IN_JSON, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
    .replace(RAW_WHITESPACE, ' ');
}
