// Integer ids beyond 2^53 (issue 37): `similar` and `passages` keep the digits written on the line, from -2^63
// to 2^64-1, through their outputs and (similar) the SQLite table; an id beyond that range or not an integer is
// refused naming file:line. The truth is the input's own text: every id is compared as the digits written.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { openDb } from '../lib/chunks/chunks-db';
import { cli } from './cli-helper';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-bigids-'));
test.after(() => fs.rmSync(dir, { recursive: true, force: true }));

const A = 'the quick brown fox jumps over the lazy dog again and again and once more';
const B = 'completely different words stand in this line for another document here';
// [id as written, text]: 2^53+1, 2^64-1, 2^63-1, -2^63, a small one, and a string of 2^64-1's digits
const DOCS: Array<[string, string]> = [
  ['9007199254740993', A], ['18446744073709551615', A], ['9223372036854775807', B], ['-9223372036854775808', B],
  ['7', `${A} ${B}`], ['"18446744073709551615"', 'nothing shared with anything'],
];
const line = (id: string, text: string | null) => `{"id": ${id}, "text": ${JSON.stringify(text)}}\n`;

function ok(args: string[]): string {
  const r = cli(dir, args);
  assert.is(r.code, 0, `neardup ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.toString();
}

/** (id, other) of output lines, as the JSON texts written (no parsing of the numbers). */
function idPairs(out: string): string[] {
  return out.trim().split('\n').filter(Boolean).map((l) => {
    const m = /^\{"id":(-?\d+|"[^"]*"),"other":(-?\d+|"[^"]*"),/.exec(l);
    assert.ok(m, `an output line: ${l}`);
    return `${m![1]} ${m![2]}`;
  }).sort();
}

/** The documents table, its ids read exactly (SQLite integers as bigints). */
function tableIds(ix: string): string[] {
  const db = openDb(path.join(dir, ix, 'similar.sqlite'), { readonly: true });
  try {
    const st = db.prepare('SELECT id FROM documents') as unknown as { safeIntegers(on: boolean): { all(): Array<{ id: unknown }> } };
    return st.safeIntegers(true).all().map(({ id }) => typeof id === 'bigint' ? `${id}` : Buffer.isBuffer(id) ? `blob:${id.toString('latin1')}` : JSON.stringify(id)).sort();
  } finally {
    db.close();
  }
}

test('similar build/top/query/update: ids from -2^63 to 2^64-1 as written, in the outputs and the table', () => {
  fs.writeFileSync(path.join(dir, 'docs.jsonl'), DOCS.map(([id, t]) => line(id, t)).join(''));
  ok(['similar', 'build', '--index', 'ix', 'docs.jsonl']);
  const top = idPairs(ok(['similar', 'top', '--index', 'ix']));
  const want = ['9007199254740993 18446744073709551615', '18446744073709551615 9007199254740993', '9223372036854775807 -9223372036854775808',
    '-9223372036854775808 9223372036854775807'];
  for (const w of want) assert.ok(top.includes(w), `top: ${w} in ${top.join(', ')}`);
  for (const id of ['9007199254740993', '18446744073709551615', '9223372036854775807', '-9223372036854775808'])
    assert.ok(top.includes(`${id} 7`), `top: ${id} -> 7`);
  // the table: integers exact (2^64-1 above SQLite's integers: a BLOB of its digits, apart from the string)
  assert.equal(tableIds('ix'), ['"18446744073709551615"', '-9223372036854775808', '7', '9007199254740993', '9223372036854775807',
    'blob:18446744073709551615'].sort());
  // --id: the string first, then the integer of those digits
  assert.equal(idPairs(ok(['similar', 'top', '--index', 'ix', '--id', '9007199254740993'])),
    ['9007199254740993 18446744073709551615', '9007199254740993 7']);
  // query: the query's ids and the others' as written
  fs.writeFileSync(path.join(dir, 'q.jsonl'), line('18446744073709551614', A));
  assert.equal(idPairs(ok(['similar', 'query', '--index', 'ix', 'q.jsonl'])),
    ['18446744073709551614 18446744073709551615', '18446744073709551614 7', '18446744073709551614 9007199254740993']);
  // update: 2^53+1 deleted, 2^64-1 replaced by B's text
  fs.writeFileSync(path.join(dir, 'u.jsonl'), line('9007199254740993', null) + line('18446744073709551615', B));
  ok(['similar', 'update', '--index', 'ix', 'u.jsonl']);
  const after = idPairs(ok(['similar', 'top', '--index', 'ix']));
  assert.ok(after.includes('18446744073709551615 9223372036854775807') && after.includes('-9223372036854775808 18446744073709551615'), after.join(', '));
  assert.not.ok(after.some((p) => p.includes('9007199254740993')), 'the deleted id is gone');
  assert.equal(tableIds('ix'), ['"18446744073709551615"', '-9223372036854775808', '7', '9223372036854775807', 'blob:18446744073709551615'].sort());
});

test('similar: an integer id beyond -2^63..2^64-1, or not an integer, is refused naming file:line', () => {
  for (const bad of ['18446744073709551616', '-9223372036854775809', '1.5', '1e300']) {
    fs.writeFileSync(path.join(dir, 'bad.jsonl'), line('1', A) + line(bad, B));
    const r = cli(dir, ['similar', 'build', '--index', `bad-${bad}`, 'bad.jsonl']);
    assert.is(r.code, 1, `${bad}: refused (${r.stderr})`);
    assert.match(r.stderr, `bad.jsonl:2: field 'id' must be a string or an integer from -2^63 to 2^64-1, got ${bad}`);
  }
});

test.run();
