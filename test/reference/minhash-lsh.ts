// A tiny model of datasketch's MinHashLSH (tests only): b hash tables keyed by each band's exact values;
// insert refuses a key already present (ValueError), remove refuses an absent one (KeyError), query returns
// every key sharing a band. Band equality is exact here (datasketch compares the bands' bytes; neardup compares
// 64-bit hashes of them). Keys come back in insertion order (a key removed and inserted again moves to the end),
// which is the order neardup's LshIndex documents.
export class RefKeyError extends Error {}
export class RefValueError extends Error {}

export class RefMinHashLSH<K extends bigint | string> {
  private readonly tables: Map<string, Set<K>>[];
  private readonly keys = new Map<K, string[]>();

  constructor(readonly b: number, readonly r: number) {
    this.tables = Array.from({ length: b }, () => new Map());
  }

  private bands(sig: ArrayLike<number | bigint>): string[] {
    return Array.from({ length: this.b }, (_, j) => Array.from({ length: this.r }, (_, i) => String(sig[j * this.r + i])).join(','));
  }

  insert(key: K, sig: ArrayLike<number | bigint>): void {
    if (this.keys.has(key)) throw new RefValueError(`key ${String(key)} already exists`);
    const h = this.bands(sig);
    this.keys.set(key, h);
    h.forEach((band, j) => {
      let s = this.tables[j].get(band);
      if (!s) this.tables[j].set(band, (s = new Set()));
      s.add(key);
    });
  }

  remove(key: K): void {
    const h = this.keys.get(key);
    if (!h) throw new RefKeyError(`key ${String(key)} does not exist`);
    h.forEach((band, j) => {
      const s = this.tables[j].get(band)!;
      s.delete(key);
      if (s.size === 0) this.tables[j].delete(band);
    });
    this.keys.delete(key);
  }

  has(key: K): boolean {
    return this.keys.has(key);
  }

  get size(): number {
    return this.keys.size;
  }

  /** Keys sharing at least one band with `sig`, in insertion order. */
  query(sig: ArrayLike<number | bigint>): K[] {
    const hit = new Set<K>();
    this.bands(sig).forEach((band, j) => this.tables[j].get(band)?.forEach((k) => hit.add(k)));
    return [...this.keys.keys()].filter((k) => hit.has(k));
  }

  /** Every pair of keys sharing a band, [earlier, later] in insertion order, sorted by that order. */
  pairs(): [K, K][] {
    const order = [...this.keys.keys()];
    const pos = new Map(order.map((k, i) => [k, i]));
    const seen = new Set<string>();
    const out: [number, number][] = [];
    for (const t of this.tables)
      for (const s of t.values()) {
        const m = [...s].map((k) => pos.get(k)!).sort((x, y) => x - y);
        for (let x = 0; x < m.length; x++)
          for (let y = x + 1; y < m.length; y++) {
            const id = `${m[x]},${m[y]}`;
            if (!seen.has(id)) {
              seen.add(id);
              out.push([m[x], m[y]]);
            }
          }
      }
    out.sort((p, q) => p[0] - q[0] || p[1] - q[1]);
    return out.map(([x, y]) => [order[x], order[y]]);
  }

  /** Keys in insertion order. */
  ordered(): K[] {
    return [...this.keys.keys()];
  }
}
