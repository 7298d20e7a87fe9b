// Turns the prose's blocks (paragraphs, lists, tables, code) and term lists into man(7) requests.
import type { Entry } from './common-sections.js';
import { parseBlocks } from './markdown-blocks.js';
import { escapeText, inlineToRoff, protectLine } from './roff.js';

/** Markdown prose as roff, starting a new paragraph. */
export function proseToRoff(markdown: string): string[] {
  const out: string[] = [];
  for (const block of parseBlocks(markdown)) {
    switch (block.kind) {
      case 'paragraph':
        out.push('.PP', inlineToRoff(block.text));
        break;
      case 'list':
        for (const item of block.items) out.push('.IP \\(bu 2', inlineToRoff(item));
        break;
      case 'table':
        // A table as tagged paragraphs: an 80-column terminal has no room for columns, and every cell after
        // the first keeps its header so that no column's meaning is lost.
        out.push('.PP');
        for (const row of block.rows) {
          out.push('.TP', inlineToRoff(row[0] ?? ''));
          row.slice(1).forEach((cell, i) => {
            if (i > 0) out.push('.br');
            out.push(inlineToRoff(`${block.header[i + 1] ?? ''}: ${cell}`));
          });
        }
        break;
      case 'code':
        out.push(
          '.PP',
          '.RS 4',
          '.nf',
          ...block.lines.map((line) => protectLine(escapeText(line))),
          '.fi',
          '.RE',
        );
        break;
    }
  }
  return out;
}

/**
 * Prose inside a tagged paragraph (an option's text): its first paragraph follows the tag, later blocks stay
 * indented under it.
 */
export function indentedProse(markdown: string): string[] {
  const lines = proseToRoff(markdown);
  if (lines[0] === '.PP') lines.shift();
  return lines.map((line) => (line === '.PP' ? '.IP' : line));
}

/** Terms with their explanations, as `.TP` items. */
export function entriesToRoff(entries: Entry[]): string[] {
  return entries.flatMap((entry) => [
    '.TP',
    `\\fB${escapeText(entry.term)}\\fR`,
    ...indentedProse(entry.text),
  ]);
}
