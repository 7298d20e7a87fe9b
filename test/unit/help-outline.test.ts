// `threatcol --help` is answered from an outline rendered at build time: it must be what the whole tree prints.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { processIo } from '../../src/cli/io.js';
import { outlineProgram } from '../../src/cli/program.js';
import { buildProgram } from '../../src/cli/whole-program.js';
import { HELP_OUTLINE_FILE, renderHelpOutline } from '../tools/help-outline.js';

test('src/cli/help-outline.ts is rendered from the current command definitions (else: npm run docs)', () => {
  const committed = readFileSync(
    fileURLToPath(new URL(`../../${HELP_OUTLINE_FILE}`, import.meta.url)),
    'utf8',
  );
  assert.ok(committed === renderHelpOutline(), `${HELP_OUTLINE_FILE} is stale: run npm run docs`);
});

/** The help text at a terminal `width` columns wide (commander wraps to it), on stdout or stderr. */
function helpAt(program: Command, width: number, error: boolean): string {
  program.configureOutput({ getOutHelpWidth: () => width, getErrHelpWidth: () => width });
  return program.helpInformation({ error });
}

test('the outline prints the whole tree’s help at every terminal width, on stdout and stderr', () => {
  const whole = buildProgram();
  const outline = outlineProgram(processIo()).program;
  for (const width of [20, 40, 60, 79, 80, 81, 100, 132, 250]) {
    for (const error of [false, true]) {
      const expected = helpAt(whole, width, error);
      assert.match(expected, /send \[options\] <endpoint>/);
      assert.equal(helpAt(outline, width, error), expected, `width ${width}${error ? ', stderr' : ''}`);
    }
  }
});
