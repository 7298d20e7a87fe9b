// Splits the reference prose (a small Markdown subset) into blocks, so the man page renderer can turn each
// into roff: paragraphs, bullet lists, tables and fenced code. Inline markup is left to the renderer.

export type Block =
  | { kind: 'paragraph'; text: string }
  | { kind: 'list'; items: string[] }
  | { kind: 'table'; header: string[]; rows: string[][] }
  | { kind: 'code'; lines: string[] };

/**
 * The subset the prose uses: blank-line separated paragraphs; `- ` bullet items whose continuation lines are
 * indented; `|` tables with a header and a `|---|` line; ``` fences. Anything else is a paragraph line.
 */
export function parseBlocks(markdown: string): Block[] {
  const lines = markdown.replace(/\r\n/g, '\n').split('\n');
  const blocks: Block[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i] as string;
    if (line.trim() === '') {
      i++;
    } else if (line.startsWith('```')) {
      const code: string[] = [];
      i++;
      while (i < lines.length && !(lines[i] as string).startsWith('```')) code.push(lines[i++] as string);
      if (i === lines.length) throw new Error(`unclosed code fence in: ${line}`);
      i++;
      blocks.push({ kind: 'code', lines: code });
    } else if (line.startsWith('|')) {
      const rows: string[][] = [];
      while (i < lines.length && (lines[i] as string).startsWith('|'))
        rows.push(splitRow(lines[i++] as string));
      const [header, separator, ...body] = rows;
      if (!header || !separator?.every((cell) => /^:?-+:?$/.test(cell))) {
        throw new Error(`a table needs a header and a |---| line: ${line}`);
      }
      blocks.push({ kind: 'table', header, rows: body });
    } else if (line.startsWith('- ')) {
      const items: string[] = [];
      while (i < lines.length && (lines[i] as string).startsWith('- ')) {
        let item = (lines[i++] as string).slice(2);
        while (i < lines.length && /^ {2}\S/.test(lines[i] as string))
          item += ` ${(lines[i++] as string).trim()}`;
        items.push(item);
      }
      blocks.push({ kind: 'list', items });
    } else {
      const text: string[] = [];
      while (i < lines.length && !startsBlock(lines[i] as string)) text.push((lines[i++] as string).trim());
      blocks.push({ kind: 'paragraph', text: text.join(' ') });
    }
  }
  return blocks;
}

function startsBlock(line: string): boolean {
  return line.trim() === '' || line.startsWith('```') || line.startsWith('|') || line.startsWith('- ');
}

/** `| a | b \| c |` -> ['a', 'b | c']: `\|` is a pipe inside a cell. */
function splitRow(line: string): string[] {
  const cells = line
    .trim()
    .replace(/^\|/, '')
    .replace(/\|$/, '')
    .split(/(?<!\\)\|/);
  return cells.map((cell) => cell.trim().replaceAll('\\|', '|'));
}
