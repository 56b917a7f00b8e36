// neardup doubri self/other/apply against doubri 1.0's own outputs (test/fixtures/vectors/doubri-v1), byte for byte,
// plus the multi-group workflow and the errors where doubri 1.0 silently misbehaves.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { readHashRecords, referenceSelf } from './reference/groups-ref';
import { cli } from './cli-helper';

const V = path.join(__dirname, 'fixtures', 'vectors', 'doubri-v1');

function setup(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-doubri-'));
  for (const g of ['groupA', 'groupB', 'edge']) {
    fs.copyFileSync(path.join(V, `${g}.hash`), path.join(dir, `${g}.hash`));
    fs.copyFileSync(path.join(V, `${g}.hash.f.init`), path.join(dir, `${g}.hash.f`));
    fs.chmodSync(path.join(dir, `${g}.hash.f`), 0o644);
  }
  fs.copyFileSync(path.join(V, 'listB.txt'), path.join(dir, 'listB.txt'));
  for (const d of ['idxA', 'idxB', 'idxE']) fs.mkdirSync(path.join(dir, d));
  return dir;
}

const same = (dir: string, ours: string, theirs = ours) =>
  assert.ok(fs.readFileSync(path.join(dir, ours)).equals(fs.readFileSync(path.join(V, theirs))), `${ours} differs from ${theirs}`);

test('doubri-v1: every output file byte for byte (self A, other B, self B, self edge, apply)', () => {
  const dir = setup();
  try {
    let r = cli(dir, ['doubri', 'self', 'idxA/index'], 'groupA.hash\n');
    assert.is(r.code, 0, r.stderr);
    fs.writeFileSync(path.join(dir, 'self-A.stats.jsonl'), r.stdout);
    r = cli(dir, ['doubri', 'other', 'idxA/index', 'listB.txt']);
    assert.is(r.code, 0, r.stderr);
    fs.writeFileSync(path.join(dir, 'other-B.stats.jsonl'), r.stdout);
    same(dir, 'groupB.hash.f', 'groupB.hash.f.after-other');
    r = cli(dir, ['doubri', 'self', 'idxB/index'], 'groupB.hash\n');
    assert.is(r.code, 0, r.stderr);
    fs.writeFileSync(path.join(dir, 'self-B.stats.jsonl'), r.stdout);
    r = cli(dir, ['doubri', 'self', 'idxE/index'], 'edge.hash\n');
    assert.is(r.code, 0, r.stderr);
    fs.writeFileSync(path.join(dir, 'self-E.stats.jsonl'), r.stdout);
    for (const g of ['groupA', 'groupB']) {
      r = cli(dir, ['doubri', 'apply', `${g}.hash.f`], fs.readFileSync(path.join(V, `${g}.jsonl`)));
      assert.is(r.code, 0, r.stderr);
      fs.writeFileSync(path.join(dir, `${g}.kept.jsonl`), r.stdout);
    }
    let compared = 0;
    for (const f of ['groupA.hash.f', 'groupB.hash.f', 'edge.hash.f', 'self-A.stats.jsonl', 'other-B.stats.jsonl',
      'self-B.stats.jsonl', 'self-E.stats.jsonl', 'groupA.kept.jsonl', 'groupB.kept.jsonl']) {
      same(dir, f);
      compared++;
    }
    for (const d of ['idxA', 'idxB', 'idxE']) {
      const theirs = fs.readdirSync(path.join(V, d)).sort();
      assert.equal(fs.readdirSync(path.join(dir, d)).sort(), theirs);
      assert.is(theirs.length, 40);
      for (const f of theirs) { same(dir, `${d}/${f}`); compared++; }
    }
    assert.is(compared, 129);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('doubri: the group workflow over three groups equals one self run over all, and the TS reference', () => {
  const dir = setup();
  try {
    // Groups in order A, B, edge: self A; other B, edge vs A; self B; other edge vs B; self edge.
    const run = (args: string[], input?: string) => { const r = cli(dir, args, input); assert.is(r.code, 0, r.stderr); return r; };
    fs.writeFileSync(path.join(dir, 'listE.txt'), 'edge.hash\n');
    run(['doubri', 'self', 'idxA/index'], 'groupA.hash\n');
    run(['doubri', 'other', 'idxA/index', 'listB.txt', 'listE.txt']);
    run(['doubri', 'self', 'idxB/index'], 'groupB.hash\n');
    run(['doubri', 'other', 'idxB/index', 'listE.txt']);
    run(['doubri', 'self', 'idxE/index'], 'edge.hash\n');
    const grouped = ['groupA', 'groupB', 'edge'].map((g) => fs.readFileSync(path.join(dir, `${g}.hash.f`), 'latin1'));

    for (const g of ['groupA', 'groupB', 'edge']) fs.copyFileSync(path.join(V, `${g}.hash.f.init`), path.join(dir, `${g}.hash.f`));
    fs.mkdirSync(path.join(dir, 'all'));
    const r = run(['doubri', 'self', 'all/index'], 'groupA.hash\ngroupB.hash\nedge.hash\n');
    assert.is(r.stdout.toString().trim().split('\n').length, 3);
    const single = ['groupA', 'groupB', 'edge'].map((g) => fs.readFileSync(path.join(dir, `${g}.hash.f`), 'latin1'));
    assert.equal(grouped, single);

    const ref = referenceSelf(['groupA', 'groupB', 'edge'].map((g) => readHashRecords(path.join(V, `${g}.hash`))),
      ['groupA', 'groupB', 'edge'].map((g) => fs.readFileSync(path.join(V, `${g}.hash.f.init`), 'latin1')));
    assert.equal(single, ref.flags);
    for (let j = 0; j < 40; j++) {
      const ours = fs.readFileSync(path.join(dir, 'all', `index.${String(j).padStart(5, '0')}`));
      assert.ok(ours.equals(Buffer.concat(ref.index[j])), `band ${j}`);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('doubri: a missing index file, a wrong flag file and a line/flag mismatch are clear errors', () => {
  const dir = setup();
  try {
    assert.is(cli(dir, ['doubri', 'self', 'idxA/index'], 'groupA.hash\n').code, 0);
    fs.rmSync(path.join(dir, 'idxA', 'index.00017'));
    const before = fs.readFileSync(path.join(dir, 'groupB.hash.f'));
    let r = cli(dir, ['doubri', 'other', 'idxA/index', 'listB.txt']);
    assert.is(r.code, 1);
    assert.match(r.stderr, /index\.00017/);
    assert.ok(fs.readFileSync(path.join(dir, 'groupB.hash.f')).equals(before), 'flags untouched on error');

    fs.writeFileSync(path.join(dir, 'edge.hash.f'), '111');
    r = cli(dir, ['doubri', 'self', 'idxE/index'], 'edge.hash\n');
    assert.is(r.code, 1);
    assert.match(r.stderr, /3 flags but its hash file has 14 records/);

    r = cli(dir, ['doubri', 'self', 'idxE/index'], 'nope.hash\n');
    assert.is(r.code, 1);
    assert.match(r.stderr, /nope\.hash/);

    fs.writeFileSync(path.join(dir, 'f'), '101');
    r = cli(dir, ['doubri', 'apply', 'f'], 'a\nb\nc\nd\n');
    assert.is(r.code, 1);
    assert.match(r.stderr, /more lines than/);
    r = cli(dir, ['doubri', 'apply', 'f'], 'a\nb\nc');  // final line without newline: processed
    assert.is(r.code, 0, r.stderr);
    assert.is(r.stdout.toString(), 'a\nc\n');
    r = cli(dir, ['doubri', 'apply', 'f'], 'a\nb\n');
    assert.is(r.code, 1);
    assert.match(r.stderr, /2 lines but 'f' has 3 flags/);
    r = cli(dir, ['doubri', 'bogus']);
    assert.is(r.code, 2);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
