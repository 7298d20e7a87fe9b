// `threatcol completion bash|zsh|fish` from the real binary: the script loads, registers itself, and completes
// commands, options, option values and the sensors of the data directory named on the line.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { before, test } from 'node:test';
import { addSensorCli, BIN, cleanEnv, runCli } from '../helpers/cli.js';
import { needs } from '../helpers/needs.js';
import { makeTempDir } from '../helpers/temp-dir.js';

let work: string;
let dataDir: string;
/**
 * PATH with `threatcol` (this checkout's) and this node first: completion runs `threatcol sensor list`, here
 * with a 60 s limit instead of 5 s, as this test machine may be slow to start node.
 */
let env: Record<string, string>;
const scripts: Record<string, string> = {};

before(async () => {
  work = makeTempDir();
  dataDir = join(work, 'data');
  await addSensorCli(dataDir, 'fw-berlin');
  await addSensorCli(dataDir, 'fw.hq');
  mkdirSync(join(work, 'bin'));
  symlinkSync(BIN, join(work, 'bin', 'threatcol'));
  env = cleanEnv({ PATH: `${join(work, 'bin')}:${dirname(process.execPath)}:${process.env.PATH ?? ''}` });
  for (const shell of ['bash', 'zsh', 'fish']) {
    const r = await runCli(['completion', shell]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '');
    scripts[shell] = join(work, `completion.${shell}`);
    writeFileSync(scripts[shell], r.stdout);
  }
});

function shell(program: string, script: string): string {
  const r = spawnSync(program, ['-c', script], { encoding: 'utf8', env, timeout: 60_000 });
  assert.equal(r.status, 0, `${program}: ${r.stderr}`);
  return r.stdout;
}

test('bash: source <(threatcol completion bash) registers _threatcol for threatcol', () => {
  assert.equal(
    shell('bash', 'source <(threatcol completion bash); complete -p threatcol'),
    'complete -F _threatcol threatcol\n',
  );
});

/** What bash offers for the words (the last is the one being completed), as the TAB key would ask. */
function bashComplete(...words: string[]): string[] {
  const quoted = words.map((w) => `'${w}'`).join(' ');
  const out = shell(
    'bash',
    `source '${scripts.bash}'; threatcol_completion_timeout=60; COMP_WORDS=(${quoted}); COMP_CWORD=${words.length - 1}; _threatcol; printf '%s\\n' "\${COMPREPLY[@]}"`,
  );
  return out.split('\n').filter(Boolean).sort();
}

test('bash completes commands, subcommands, options and their fixed values', () => {
  assert.deepEqual(bashComplete('threatcol', 'sens'), ['sensor']);
  assert.deepEqual(bashComplete('threatcol', 'sen'), ['send', 'sensor']);
  assert.deepEqual(bashComplete('threatcol', 'sensor', 'r'), ['revoke', 'rotate']);
  assert.deepEqual(bashComplete('threatcol', 'threats', 'tail', '--min'), ['--min-criticality']);
  assert.deepEqual(bashComplete('threatcol', 'threats', 'tail', '-n', '5', '--e'), ['--endpoint']);
  assert.deepEqual(bashComplete('threatcol', 'serve', '--log-format', ''), ['auto', 'json', 'pretty']);
  // bash splits --log-level=... at '=': the value after it is completed too.
  assert.deepEqual(bashComplete('threatcol', 'serve', '--log-level', '=', 'de'), ['debug']);
  assert.deepEqual(bashComplete('threatcol', 'serve', '--workers', ''), ['auto']);
  assert.deepEqual(bashComplete('threatcol', 'threats', 'stats', '--by', 's'), [
    'sensor',
    'src_asn',
    'src_country',
    'src_ip',
  ]);
  assert.deepEqual(bashComplete('threatcol', 'send', ''), ['firewall', 'generic', 'syslog']);
  assert.deepEqual(bashComplete('threatcol', 'feed', 'add', 'edge', '--format', 'f'), ['fortinet']);
  assert.deepEqual(bashComplete('threatcol', 'completion', ''), ['bash', 'fish', 'zsh']);
  assert.deepEqual(bashComplete('threatcol', 'help', 'sy'), ['systemd-unit']);
  // A file or a directory where the option takes one; nothing after a command's one argument.
  assert.deepEqual(bashComplete('threatcol', 'serve', '--config', join(work, 'completion.b')), [
    scripts.bash,
  ]);
  assert.deepEqual(bashComplete('threatcol', 'check', '--data-dir', join(work, 'da')), [dataDir]);
  assert.deepEqual(bashComplete('threatcol', 'send', 'generic', ''), []);
});

test('bash completes the names of the sensors in the data directory on the line', () => {
  assert.deepEqual(bashComplete('threatcol', 'sensor', 'revoke', '--data-dir', dataDir, ''), [
    'fw-berlin',
    'fw.hq',
  ]);
  assert.deepEqual(bashComplete('threatcol', 'sensor', 'rotate', '--data-dir', dataDir, 'fw.'), ['fw.hq']);
  assert.deepEqual(bashComplete('threatcol', 'threats', 'tail', '--data-dir', dataDir, '--sensor', ''), [
    'fw-berlin',
    'fw.hq',
  ]);
  // A new sensor's name is not completed; nor are names from a registry that cannot be read.
  assert.deepEqual(bashComplete('threatcol', 'sensor', 'add', '--data-dir', dataDir, ''), []);
  assert.deepEqual(bashComplete('threatcol', 'sensor', 'show', '--data-dir', join(work, 'none'), ''), []);
});

test("zsh: the script registers itself and completes with the completion system's functions", {
  skip: needs('zsh'),
}, () => {
  // compadd, _describe and _files exist only inside a completion widget: stand-ins print what they are given.
  const stubs = `compdef() { print "compdef $*" }
compadd() { if [[ $1 == -a ]]; then print -l -- \${(P)2}; else [[ $1 == -- ]] && shift; print -l -- "$@"; fi }
_describe() { print -l -- \${(P)4} }
_files() { print "FILES $*" }
compset() { : }
threatcol_completion_timeout=60
source '${scripts.zsh}'`;
  const complete = (...words: string[]) =>
    shell(
      'zsh',
      `${stubs}\nwords=(${words.map((w) => `'${w}'`).join(' ')}); CURRENT=${words.length}; _threatcol`,
    )
      .split('\n')
      .filter((l) => l && !l.startsWith('compdef'));
  assert.match(shell('zsh', stubs), /^compdef _threatcol threatcol$/m);
  assert.ok(
    complete('threatcol', 'sen').includes('sensor:issue, list, change, revoke and delete sensor keys'),
  );
  assert.deepEqual(complete('threatcol', 'serve', '--log-format', ''), ['auto', 'json', 'pretty']);
  assert.deepEqual(complete('threatcol', 'serve', '--log-format=j'), ['auto', 'json', 'pretty']);
  assert.deepEqual(complete('threatcol', 'serve', '--data-dir', ''), ['FILES -/']);
  assert.deepEqual(complete('threatcol', 'sensor', 'revoke', '--data-dir', dataDir, ''), [
    'fw-berlin',
    'fw.hq',
  ]);
});

test('fish: complete -C offers commands with their descriptions, values and sensors', {
  skip: needs('fish'),
}, () => {
  const complete = (line: string) =>
    shell('fish', `set threatcol_completion_timeout 60; source '${scripts.fish}'; complete -C '${line}'`)
      .split('\n')
      .filter(Boolean)
      .map((l) => l.split('\t')[0])
      .sort();
  assert.deepEqual(complete('threatcol sens'), ['sensor']);
  assert.deepEqual(complete('threatcol sensor r'), ['revoke', 'rotate']);
  assert.deepEqual(complete('threatcol serve --log-format '), ['auto', 'json', 'pretty']);
  assert.deepEqual(complete('threatcol send '), ['firewall', 'generic', 'syslog']);
  assert.deepEqual(complete(`threatcol sensor revoke --data-dir ${dataDir} `), ['fw-berlin', 'fw.hq']);
});

test('threatcol completion with another shell is a usage error', async () => {
  const r = await runCli(['completion', 'tcsh']);
  assert.equal(r.code, 64);
  assert.match(r.stderr, /^threatcol: USAGE: .*tcsh/);
});
