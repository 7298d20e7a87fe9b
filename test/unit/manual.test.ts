// The command reference cannot drift from the commander definitions: docs/cli.md is what they render, every
// command has its prose and all prose belongs to a command, every flag the prose names exists; and the roff
// escaping lets no text become a request or an escape.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { allCommands, describeProgram } from '../../src/cli/manual/command-model.js';
import { renderCliMarkdown } from '../../src/cli/manual/index.js';
import { anchor } from '../../src/cli/manual/render-markdown.js';
import { escapeText, inlineToRoff, protectLine } from '../../src/cli/manual/roff.js';
import { MANUALS } from '../../src/cli/manual/text/index.js';
import { buildProgram } from '../../src/cli/whole-program.js';

const tree = describeProgram(buildProgram(), MANUALS);
const commands = allCommands(tree);

test('docs/cli.md is what the command definitions render (run npm run docs after changing them)', () => {
  const committed = readFileSync(new URL('../../docs/cli.md', import.meta.url), 'utf8');
  assert.equal(committed, renderCliMarkdown(buildProgram()), 'docs/cli.md is stale: run npm run docs');
});

test('every command has its reference prose, and every piece of prose belongs to a command', () => {
  const paths = commands.map((c) => c.path.join(' '));
  assert.deepEqual(Object.keys(MANUALS).sort(), [...paths].sort());
  for (const cmd of commands) {
    const longs = new Set(cmd.options.map((o) => o.long));
    for (const flag of Object.keys(cmd.manual?.options ?? {})) {
      assert.ok(
        longs.has(flag),
        `the prose of "${cmd.path.join(' ')}" explains ${flag}, which it does not have`,
      );
    }
  }
});

test('every flag the prose names is a flag of some command (a renamed flag fails here)', () => {
  const known = new Set(commands.flatMap((c) => c.options.flatMap((o) => [o.long, o.short])));
  // Flags of other programs that the prose quotes: npm's, systemctl's and Node's.
  const foreign = new Set(['--now', '--max-old-space-size']);
  const texts = commands.flatMap((c) => {
    const m = c.manual;
    if (!m) return [];
    return [
      m.description,
      m.exitStatus ?? '',
      ...Object.values(m.options ?? {}),
      ...(m.sections ?? []).map((s) => s.body),
    ];
  });
  const named = new Set(
    texts.flatMap((text) => [...text.matchAll(/(?<![\w-])--[a-z][a-z-]*/g)].map((m) => m[0])),
  );
  assert.ok(named.size > 30, `only ${named.size} flags named: the pattern is broken`);
  const unknown = [...named].filter((flag) => !known.has(flag) && !foreign.has(flag));
  assert.deepEqual(unknown, []);
});

test('every option and argument reaches docs/cli.md under its command', () => {
  const doc = renderCliMarkdown(buildProgram());
  for (const cmd of commands.filter((c) => c.subcommands.length === 0)) {
    const name = ['threatcol', ...cmd.path].join(' ');
    const start = doc.indexOf(`# ${name}\n`);
    assert.ok(start !== -1, name);
    const section = doc.slice(start, doc.indexOf('\n## ', start + 1));
    for (const option of cmd.options)
      assert.ok(section.includes(`- \`${option.flags}\`: `), `${name} ${option.flags}`);
    for (const arg of cmd.arguments) assert.ok(section.includes(`<${arg.name}>`), `${name} <${arg.name}>`);
  }
});

/** The anchors GitHub gives a Markdown file's headings (a repeated heading gets -1, -2, ...). */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const [, heading] of markdown.replace(/```[\s\S]*?```/g, '').matchAll(/^#{1,6} (.+)$/gm)) {
    const slug = anchor(heading as string);
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    out.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return out;
}

test('every link of docs/cli.md leads to a file and heading that exist (pages move: this says where)', () => {
  const file = fileURLToPath(new URL('../../docs/cli.md', import.meta.url));
  const doc = readFileSync(file, 'utf8');
  const links = [...doc.replace(/```[\s\S]*?```/g, '').matchAll(/\]\(([^)\s]+)\)/g)].map(
    (m) => m[1] as string,
  );
  assert.ok(links.length > 10, `only ${links.length} links found`);
  for (const link of links.filter((l) => !/^[a-z]+:/.test(l))) {
    const [path, hash] = link.split('#');
    const target = path ? resolve(dirname(file), path) : file;
    assert.ok(existsSync(target), `${link}: no ${target}`);
    if (hash) assert.ok(anchors(readFileSync(target, 'utf8')).has(hash), `${link}: no heading #${hash}`);
  }
});

test('roff escaping: a leading dot or quote, a backslash or a hyphen stay text', () => {
  assert.equal(protectLine(escapeText('.TH x')), '\\&.TH x');
  assert.equal(protectLine(escapeText("'br")), "\\&'br");
  assert.equal(escapeText('a\\fBb'), 'a\\efBb');
  assert.equal(escapeText('--data-dir'), '\\-\\-data\\-dir');
  assert.equal(escapeText('→'), '\\[u2192]');
  assert.equal(
    inlineToRoff('`--json` and **bold** [link](x.md)'),
    '\\fB\\-\\-json\\fR and \\fBbold\\fR link',
  );
  assert.equal(inlineToRoff('.starts with a dot'), '\\&.starts with a dot');
});

test('any printable text, escaped, comes out of groff as itself and without a warning', () => {
  const ascii = Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i));
  const printable = fc
    .string({ unit: fc.constantFrom(...ascii), maxLength: 40 })
    .map((s) => s.trim().replace(/ +/g, ' '))
    .filter((s) => s.length > 0);
  const samples = [
    ...fc.sample(printable, { numRuns: 300, seed: 19 }),
    '.TH x',
    "'br",
    '\\fB',
    '\\',
    '"q"',
    '..',
  ];
  const page = ['.TH T 8', '.nh', '.ad l', '.SH NAME', 't \\- t', '.SH SAMPLES', 'Samples follow.'];
  for (const s of samples) page.push('.PP', protectLine(escapeText(s)));
  const groff = spawnSync('groff', ['-man', '-Tutf8', '-ww', '-P-cbou'], {
    input: `${page.join('\n')}\n`,
    encoding: 'utf8',
  });
  assert.equal(groff.stderr, '');
  const paragraphs = new Set(groff.stdout.split(/\n\s*\n/).map((p) => p.replace(/\s+/g, ' ').trim()));
  for (const s of samples) assert.ok(paragraphs.has(s), `${JSON.stringify(s)} did not come out as itself`);
});
