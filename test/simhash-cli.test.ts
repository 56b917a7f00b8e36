import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { simhashFingerprintsSync } from '../lib/index';
import { TSX_FLAGS } from './support/tsx';

const V = JSON.parse(fs.readFileSync(path.join(__dirname, 'fixtures', 'vectors', 'simhash-py', 'vectors.json'), 'utf8'));
const CLI = path.join(__dirname, '..', 'lib', 'cli', 'main.ts');
const run = (args: string[], input: string) =>
  spawnSync(process.execPath, [...TSX_FLAGS, CLI, 'simhash', ...args], { input, encoding: 'utf8' });

test('cli: fingerprint --profile seomoz reproduces the documents', () => {
  const input = V.documents.map((d: { text: string }) => JSON.stringify({ text: d.text })).join('\n') + '\n';
  const r = run(['fingerprint', '--profile', 'seomoz'], input);
  assert.is(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim().split('\n'), V.documents.map((d: { fingerprint: string }) => d.fingerprint));
});

test('cli: fingerprint without --profile is the library default', () => {
  const texts: string[] = V.documents.map((d: { text: string }) => d.text).concat(['Two words', '']);
  const r = run(['fingerprint'], texts.map((text) => JSON.stringify({ text })).join('\n') + '\n');
  assert.is(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim().split('\n'), Array.from(simhashFingerprintsSync(texts), String));
});

test('cli: find-all reproduces simhash-find-all pairs; --ids reports identical fingerprints; --clusters', () => {
  const input = V.find_all_points.join('\n') + '\n';
  const fa = V.find_all.find((x: { blocks: number; distance: number }) => x.blocks === 6 && x.distance === 4);
  const want = fa.pairs.map((p: string[]) => p.map(BigInt).sort((a: bigint, b: bigint) => (a < b ? -1 : 1))).sort((x: bigint[], y: bigint[]) =>
    x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : x[1] < y[1] ? -1 : 1).map((p: bigint[]) => `${p[0]} ${p[1]}`);
  const r = run(['find-all', '--blocks', '6', '--distance', '4'], input);
  assert.is(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim().split('\n'), want);
  const ids = run(['find-all', '--ids', '--distance', '4'], V.find_all_points.map((p: string, i: number) => `${i} ${p}`).join('\n'));
  const dupes = V.find_all_points.length - new Set(V.find_all_points).size;
  assert.ok(dupes > 0);
  assert.ok(ids.stdout.trim().split('\n').length >= want.length + dupes);
  const c = run(['find-all', '--distance', '4', '--clusters'], input);
  const members = c.stdout.trim().split('\n').flatMap((l) => l.split(' '));
  assert.is(members.length, new Set(want.flatMap((p: string) => p.split(' '))).size);
  const bad = run(['find-all'], '12\nnope\n');
  assert.is(bad.status, 1);
  assert.match(bad.stderr, /-:2/);
  assert.is(run(['find-all', '--blocks', '2', '--distance', '3'], '').status, 2);
  const tooMany = run(['find-all', '--blocks', '64', '--distance', '8'], '1\n');
  assert.is(tooMany.status, 2);
  assert.match(tooMany.stderr, /4096/);
});

test.run();
