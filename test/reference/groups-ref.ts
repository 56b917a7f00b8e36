// A tiny reference of doubri 1.0's self step (used only by tests): sets of band strings, sequential.
import * as fs from 'node:fs';

export function readHashRecords(file: string): Buffer[] {
  const d = fs.readFileSync(file);
  const n = Number(d.readBigUInt64LE(8));
  const out: Buffer[] = [];
  for (let i = 0; i < n; i++) out.push(d.subarray(24 + i * 3200, 24 + (i + 1) * 3200));
  return out;
}

/** Returns the new flags of each file ('0'/'1' strings) after self over `files` in order. */
export function referenceSelf(records: Buffer[][], flags: string[]): { flags: string[]; index: Buffer[][] } {
  const sets: Set<string>[] = Array.from({ length: 40 }, () => new Set());
  const kept: Buffer[][] = Array.from({ length: 40 }, () => []);
  const outFlags = flags.map((f, fi) => {
    const chars = f.split('');
    records[fi].forEach((rec, i) => {
      if (chars[i] !== '1') return;
      const bands = Array.from({ length: 40 }, (_, j) => rec.subarray(j * 80, j * 80 + 80));
      if (bands.some((b, j) => sets[j].has(b.toString('hex')))) chars[i] = '0';
      else bands.forEach((b, j) => { sets[j].add(b.toString('hex')); kept[j].push(b); });
    });
    return chars.join('');
  });
  return { flags: outFlags, index: kept.map((k) => k.slice().sort(Buffer.compare)) };
}
