// A command line loads only the definitions it reaches (command-table.ts): the table must name every command of
// the whole tree, in its order, and pick the part a command line needs.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Command } from 'commander';
import { COMMANDS, commandsFor } from '../../src/cli/command-table.js';
import { processIo } from '../../src/cli/io.js';
import { assembleProgram } from '../../src/cli/program.js';
import { buildProgram, REGISTERS } from '../../src/cli/whole-program.js';

const paths = (entries: readonly { path: readonly string[] }[]) => entries.map((e) => e.path.join(' '));

/** Every command path of a tree, depth first: `sensor`, `sensor add`, ... */
function treePaths(cmd: Command, prefix: string[] = []): string[] {
  return cmd.commands.flatMap((c) => {
    const path = [...prefix, c.name()];
    return [path.join(' '), ...treePaths(c, path)];
  });
}

test('the table lists the whole tree’s commands in its order, each loading the module whole-program.ts uses', async () => {
  assert.deepEqual(paths(COMMANDS), Object.keys(REGISTERS));
  for (const entry of COMMANDS)
    assert.equal(await entry.load(), REGISTERS[entry.path.join(' ')], entry.path.join(' '));
  const leaves = treePaths(buildProgram()).filter(
    (p) => p.includes(' ') || !/^(sensor|threats|source|outputs|feed|block|allow|store)$/.test(p),
  );
  assert.deepEqual(leaves, paths(COMMANDS));
});

test('each command alone registers its own path and nothing else', async () => {
  for (const entry of COMMANDS) {
    const { program } = assembleProgram(processIo(), () => {}, [[entry, await entry.load()]]);
    const expected = entry.path.length === 1 ? [entry.path[0]] : [entry.path[0], entry.path.join(' ')];
    assert.deepEqual(treePaths(program), expected);
  }
});

test('a command line reaches its command, a group without a known subcommand the group, else everything', () => {
  const all = paths(COMMANDS);
  const group = (name: string) => all.filter((p) => p.startsWith(`${name} `));
  const cases: [string[], string[]][] = [
    [['sensor', 'list', '--json'], ['sensor list']],
    [['threats', 'tail', '-n', '10'], ['threats tail']],
    [['store', 'migrate', '--help'], ['store migrate']],
    [['serve', '--port', '0'], ['serve']],
    [['send', '--help'], ['send']],
    [['sensor'], group('sensor')],
    [['sensor', '--help'], group('sensor')],
    [['outputs', 'nosuch'], group('outputs')],
    [['threats', 'tial'], group('threats')],
    [['serv'], all],
    [['--config', 'x', 'sensor', 'list'], all],
    // Its action renders the whole tree.
    [['completion', 'bash'], all],
    [[], all],
  ];
  for (const [argv, expected] of cases) assert.deepEqual(paths(commandsFor(argv)), expected, argv.join(' '));
});
