// `threatcol --help` is answered from text and an outline rendered at build time: both must be what the whole
// tree prints.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Command } from 'commander';
import { preRenderedHelp } from '../../src/cli/help-text.js';
import { processIo } from '../../src/cli/io.js';
import { outlineProgram } from '../../src/cli/program.js';
import { buildProgram } from '../../src/cli/whole-program.js';

/** The help text at a terminal `width` columns wide (commander wraps to it), on stdout or stderr. */
function helpAt(program: Command, width: number, error: boolean): string {
  program.configureOutput({ getOutHelpWidth: () => width, getErrHelpWidth: () => width });
  return program.helpInformation({ error });
}

test('the outline prints the whole tree’s help at every terminal width, on stdout and stderr', async () => {
  const whole = buildProgram();
  const outline = (await outlineProgram(processIo())).program;
  for (const width of [20, 40, 60, 79, 80, 81, 100, 132, 250]) {
    for (const error of [false, true]) {
      const expected = helpAt(whole, width, error);
      assert.match(expected, /send \[options\] <endpoint>/);
      assert.equal(helpAt(outline, width, error), expected, `width ${width}${error ? ', stderr' : ''}`);
    }
  }
});

test('the pre-rendered help is what commander prints, at every width it answers for', async () => {
  const whole = buildProgram();
  // A pipe: commander takes 80 columns.
  assert.equal(await preRenderedHelp({ isTTY: false }), helpAt(whole, 80, false));
  let answered = 0;
  for (let width = 1; width <= 300; width++) {
    const text = await preRenderedHelp({ isTTY: true, columns: width });
    if (text === null) continue;
    answered++;
    assert.equal(text, helpAt(whole, width, false), `width ${width}`);
  }
  // 80 columns and every width from the longest line up: the usual terminals need no commander.
  assert.ok(answered > 150, `${answered} widths`);
  assert.equal(await preRenderedHelp({ isTTY: true, columns: 79 }), null);
});
