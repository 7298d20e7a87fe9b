// A record's values inside a message written for people (the mail digest, the chat alert of webhook format
// `slack`): each value on one line, bounded, and in chat unable to form markup. The one home of that cleaning.

/** Characters a record's value may not bring into a message, each run replaced by one space. */
const UNSAFE =
  // C0 controls (line feed, carriage return, tab, ...), DEL and C1 controls (NEL): line breaks, real or faked;
  // U+2028 and U+2029: line and paragraph separators; U+202A-U+202E and U+2066-U+2069: bidirectional embeddings,
  // overrides and isolates, which reorder what a reader sees.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what is replaced
  /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]+/g;

/** Characters of one value in a message; a longer value is cut and ends with `…`. */
export const VALUE_CHARS = 200;

/** A record's value as text on one line: control and reordering characters become a space, at most `max` characters. */
export function oneLine(value: unknown, max = VALUE_CHARS): string {
  const text = String(value ?? '').replace(UNSAFE, ' ');
  if (text.length <= max) return text;
  // Never half a surrogate pair.
  const end = /[\ud800-\udbff]/.test(text.charAt(max - 2)) ? max - 2 : max - 1;
  return `${text.slice(0, end)}…`;
}

/** The zero-width space put after `@` and between `]` and `(`: invisible, and no mention or link forms across it. */
const ZWSP = '\u200b';

/**
 * A record's value in a chat message (Slack mrkdwn; Mattermost and Teams markdown): `oneLine`, then `&`, `<` and
 * `>` escaped as Slack documents (`&amp;` `&lt;` `&gt;`), so no `<!channel>`, `<@U123>` or `<https://…|text>` can
 * form; an `@` is followed by a zero-width space, so no `@channel`, `@all`, `@here` or `@user` mention forms in
 * Mattermost; `](` is split the same way, so no markdown link shows a text of its own over another address.
 */
export function chatText(value: unknown, max = VALUE_CHARS): string {
  return oneLine(value, max)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/@/g, `@${ZWSP}`)
    .replace(/\]\(/g, `]${ZWSP}(`);
}
