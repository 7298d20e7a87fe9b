// The image's tar writer read back by GNU tar: names that fit ustar, that need its prefix field and that need a pax
// header; owners, modes, symlinks (a long target too), directories, and one time stamp; and the same bytes twice.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { lstatSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { type TarEntry, tarChunks } from '../../packaging/image/tar-writer.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const EPOCH = 1_700_000_000;
const deep = `${'d'.repeat(60)}/${'e'.repeat(60)}/${'f'.repeat(60)}`; // 182 bytes: ustar's prefix + name
const long = `${'g'.repeat(120)}/${'h'.repeat(150)}`; // no split fits: a pax header
const longTarget = `/${'t'.repeat(150)}`;

const entries: TarEntry[] = [
  { path: 'etc', type: 'directory', mode: 0o755, uid: 0, gid: 0 },
  { path: 'etc/conf.json', type: 'file', mode: 0o640, uid: 0, gid: 65532, data: Buffer.from('{"a":1}\n') },
  { path: 'var/lib/data', type: 'directory', mode: 0o700, uid: 65532, gid: 65532 },
  { path: 'bin', type: 'symlink', mode: 0o777, uid: 0, gid: 0, target: 'usr/bin' },
  { path: 'far', type: 'symlink', mode: 0o777, uid: 0, gid: 0, target: longTarget },
  { path: deep, type: 'file', mode: 0o755, uid: 0, gid: 0, data: Buffer.alloc(1000, 7) },
  { path: long, type: 'file', mode: 0o644, uid: 0, gid: 0, data: Buffer.alloc(512, 1) },
  { path: 'empty', type: 'file', mode: 0o644, uid: 0, gid: 0, data: Buffer.alloc(0) },
];

test('GNU tar reads what the tar writer writes: names of any length, owners, modes, links, time', (t) => {
  const dir = makeTempDir(t, 'tar-writer-');
  const archive = join(dir, 'a.tar');
  const bytes = Buffer.concat(tarChunks(entries, EPOCH));
  assert.equal(bytes.length % 512, 0);
  assert.deepEqual(Buffer.concat(tarChunks(entries, EPOCH)), bytes);
  writeFileSync(archive, bytes);

  const listing = execFileSync('tar', ['--numeric-owner', '--full-time', '-tvf', archive], {
    encoding: 'utf8',
  })
    .trim()
    .split('\n')
    .map((line) => line.split(/\s+/));
  const when = new Date(EPOCH * 1000).toISOString().slice(0, 19).replace('T', ' ');
  for (const fields of listing) assert.equal(`${fields[3]} ${fields[4]}`, when, fields.join(' '));
  const byName = new Map(listing.map((f) => [f[5] as string, f]));
  assert.deepEqual(byName.get('etc/conf.json')?.slice(0, 2), ['-rw-r-----', '0/65532']);
  assert.deepEqual(byName.get('var/lib/data/')?.slice(0, 2), ['drwx------', '65532/65532']);
  assert.equal(byName.get(deep)?.[0], '-rwxr-xr-x');
  assert.equal(byName.get(long)?.[2], '512');

  const out = join(dir, 'out');
  execFileSync('mkdir', [out]);
  execFileSync('tar', ['-xf', archive, '-C', out]);
  assert.equal(readFileSync(join(out, 'etc/conf.json'), 'utf8'), '{"a":1}\n');
  assert.deepEqual(readFileSync(join(out, deep)), Buffer.alloc(1000, 7));
  assert.deepEqual(readFileSync(join(out, long)), Buffer.alloc(512, 1));
  assert.equal(readFileSync(join(out, 'empty')).length, 0);
  assert.equal(readlinkSync(join(out, 'bin')), 'usr/bin');
  assert.equal(readlinkSync(join(out, 'far')), longTarget);
  assert.equal(lstatSync(join(out, 'var/lib/data')).mode & 0o7777, 0o700);
});
