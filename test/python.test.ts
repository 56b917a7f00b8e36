// docs/python.md's recipe, run as written (its ```python block) with python3 and numpy on a small corpus
// through the real command line (a `neardup` on PATH running lib/cli/main.ts), then its results compared
// with the library's: kept ids and duplicate_of from dedup(), pairs with their exact Jaccard, signatures
// from minhashSync(), fingerprints from simhashFingerprintsSync(). Skipped, saying so, without python3+numpy.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { dedup, minhashSync, simhashFingerprintsSync } from '../lib/index';
import { rng } from './reference/random';

const root = path.join(__dirname, '..');
// The first of these with numpy: $NEARDUP_PYTHON, the python3 on PATH (may be a pyenv one), then the system's
// (where Debian's python3-numpy, which .ci/run installs, goes).
const CANDIDATES = process.env.NEARDUP_PYTHON ? [process.env.NEARDUP_PYTHON] : ['python3', '/usr/bin/python3'];
let PYTHON = CANDIDATES[0];

function pythonWithNumpy(): string | null {
  for (const py of CANDIDATES) {
    const r = spawnSync(py, ['-c', 'import numpy; print(numpy.__version__)'], { encoding: 'utf8' });
    if (r.status === 0) {
      PYTHON = py;
      return r.stdout.trim();
    }
  }
  return null;
}

function recipe(): string {
  const md = fs.readFileSync(path.join(root, 'docs', 'python.md'), 'utf8');
  const blocks = [...md.matchAll(/```python\n([\s\S]*?)```/g)].map((m) => m[1]);
  assert.is(blocks.length, 1, 'docs/python.md has one python block');
  return blocks[0];
}

function corpus(): { ids: string[]; texts: string[] } {
  const r = rng(42);
  const vocab = Array.from({ length: 800 }, (_, i) => `w${i.toString(36)}`);
  const texts: string[] = [];
  for (let i = 0; i < 300; i++) {
    if (i > 10 && r() < 0.3) {
      const src = texts[Math.floor(r() * texts.length)].split(' ');
      texts.push(src.map((w) => (r() < 0.02 ? vocab[Math.floor(r() * vocab.length)] : w)).join(' '));
    } else {
      texts.push(Array.from({ length: 60 + Math.floor(r() * 60) }, () => vocab[Math.floor(r() * vocab.length)]).join(' '));
    }
  }
  return { ids: texts.map((_, i) => `doc-${(i * 7919) % 1000}`), texts };
}

test('docs/python.md: the recipe runs and agrees with the library', async () => {
  const numpy = pythonWithNumpy();
  if (!numpy) {
    console.log(`  SKIPPED: ${PYTHON} with numpy is not available (install python3-numpy to run docs/python.md's recipe)`);
    return;
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-python-'));
  try {
    const { ids, texts } = corpus();
    fs.writeFileSync(path.join(dir, 'corpus.jsonl'), texts.map((t, i) => JSON.stringify({ id: ids[i], text: t })).join('\n') + '\n');
    const bin = path.join(dir, 'bin');
    fs.mkdirSync(bin);
    const TSX = pathToFileURL(require.resolve('tsx')).href;
    fs.writeFileSync(path.join(bin, 'neardup'),
      `#!/bin/sh\nexec '${process.execPath}' --import '${TSX}' '${path.join(root, 'lib', 'cli', 'main.ts')}' "$@"\n`, { mode: 0o755 });
    const epilogue = `
import json as _json
print(_json.dumps({
  "summary": summary, "kept_ids": kept_ids, "duplicate_of": duplicate_of,
  "pairs": [[a, b, e] for a, b, e in pairs], "shape": list(sigs.shape), "sigs": sigs.ravel().tolist(),
  "options": options, "j01": estimated_jaccard(0, 1),
  "fingerprints": [str(int(x)) for x in fingerprints], "h01": hamming(0, 1),
}))
`;
    fs.writeFileSync(path.join(dir, 'recipe.py'), recipe() + epilogue);
    const r = spawnSync(PYTHON, ['recipe.py'], {
      cwd: dir, encoding: 'utf8', maxBuffer: 1 << 28, timeout: 300_000,
      env: { ...process.env, PATH: `${bin}${path.delimiter}${process.env.PATH}` },
    });
    assert.is(r.status, 0, `python3 recipe.py failed:\n${r.stderr}`);
    const out = JSON.parse(r.stdout);

    const want = await dedup(texts, { threshold: 0.8, verify: 'exact', pairs: true });
    assert.ok(want.duplicates > 20, `${want.duplicates} duplicates in the corpus`);
    assert.is(out.summary.documents, texts.length);
    assert.is(out.summary.duplicates, want.duplicates);
    assert.equal(out.kept_ids, ids.filter((_, i) => want.duplicate[i] === 0));
    const dupOf: Record<string, string> = {};
    for (let i = 0; i < texts.length; i++) if (want.duplicate[i]) dupOf[ids[i]] = ids[want.representative[i]];
    assert.equal(out.duplicate_of, dupOf);
    const key = (a: string, b: string) => `${a} ${b}`;
    const gotPairs = new Map<string, number>(out.pairs.map((p: [string, string, number]) => [key(p[0], p[1]), p[2]]));
    assert.is(gotPairs.size, want.pairA.length);
    for (let i = 0; i < want.pairA.length; i++) {
      const e = gotPairs.get(key(ids[want.pairA[i]], ids[want.pairB[i]]));
      assert.ok(e !== undefined && Math.abs(e - want.pairExact[i]) < 1e-5, `pair ${want.pairA[i]} ${want.pairB[i]}`);
    }

    const sigs = minhashSync(texts, { numPerm: 128 });
    assert.equal(out.shape, [texts.length, 128]);
    assert.equal(out.sigs, Array.from(sigs.signatures));
    assert.is(out.options.numPerm, 128);
    let eq = 0;
    for (let j = 0; j < 128; j++) if (sigs.signatures[j] === sigs.signatures[128 + j]) eq++;
    assert.is(out.j01, eq / 128);

    const fps = simhashFingerprintsSync(texts, { profile: 'default', unit: 'word', n: 3, split: 'nonword', lowercase: true });
    assert.equal(out.fingerprints, Array.from(fps, String));
    let x = fps[0] ^ fps[1], bits = 0;
    while (x) { x &= x - 1n; bits++; }
    assert.is(out.h01, bits);
    console.log(`  (ran with numpy ${numpy})`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
