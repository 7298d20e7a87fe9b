// Roff escaping for man(7) pages and the conversion of the prose's inline Markdown (code, bold, links) into
// font changes, so any text can go into a page without being read as a request or an escape.

/**
 * Plain text as roff: backslashes as `\e`, every `-` as `\-` (an ASCII hyphen-minus in the output, so options
 * and commands can be copied), non-ASCII as `\[uXXXX]` (groff reads its input as Latin-1 unless told).
 */
export function escapeText(text: string): string {
  let out = '';
  for (const ch of text) {
    if (ch === '\\') out += '\\e';
    else if (ch === '-') out += '\\-';
    else if ((ch.codePointAt(0) as number) > 0x7e) out += `\\[u${hex(ch)}]`;
    else out += ch;
  }
  return out;
}

function hex(ch: string): string {
  return (ch.codePointAt(0) as number).toString(16).toUpperCase().padStart(4, '0');
}

/**
 * A line of output text: a leading `.` or `'` would start a request, so it gets the zero-width `\&` before
 * it; so does every such character after a line break inside the text.
 */
export function protectLine(line: string): string {
  return line.replace(/^([.'])/, '\\&$1');
}

/** A line of roff text from inline Markdown: `code` and **bold** in bold; [text](target) as its text. */
export function inlineToRoff(markdown: string): string {
  let out = '';
  let rest = markdown;
  while (rest.length > 0) {
    const code = /^`([^`]+)`/.exec(rest);
    const bold = /^\*\*(.+?)\*\*/.exec(rest);
    const link = /^\[([^\]]+)\]\(([^)\s]+)\)/.exec(rest);
    if (code) {
      out += `\\fB${escapeText(code[1] as string)}\\fR`;
      rest = rest.slice(code[0].length);
    } else if (bold) {
      out += `\\fB${inlineToRoff(bold[1] as string).replaceAll('\\fR', '\\fB')}\\fR`;
      rest = rest.slice(bold[0].length);
    } else if (link) {
      out += inlineToRoff(link[1] as string);
      rest = rest.slice(link[0].length);
    } else {
      const next = rest.slice(1).search(/[`*[]/);
      const plain = next === -1 ? rest : rest.slice(0, next + 1);
      out += escapeText(plain);
      rest = rest.slice(plain.length);
    }
  }
  return protectLine(out);
}

/** A macro argument: quoted, with inner double quotes doubled (groff) so spaces and quotes survive. */
export function quoteArg(text: string): string {
  return `"${text.replaceAll('"', '""')}"`;
}
