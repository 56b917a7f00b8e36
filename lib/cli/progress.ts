// Progress on stderr, only when stderr is a terminal (never in pipes or logs), at most 5 updates a second.
export class Progress {
  private readonly enabled: boolean;
  private last = 0;
  private readonly start = Date.now();
  private shown = false;

  constructor(
    private readonly label: string,
    enabled = Boolean(process.stderr.isTTY),
    private readonly stream: NodeJS.WritableStream = process.stderr,
  ) {
    this.enabled = enabled;
  }

  /**
   * fraction: how much of the input is done (0..1) when its size is known: shown as a percentage with the
   * estimated time left (from the rate so far).
   */
  update(fields: { bytes?: number; docs?: number; total?: number; fraction?: number; extra?: string }, force = false): void {
    if (!this.enabled) return;
    const now = Date.now();
    if (!force && now - this.last < 200) return;
    this.last = now;
    const secs = Math.max((now - this.start) / 1000, 1e-3);
    const parts: string[] = [this.label];
    if (fields.bytes !== undefined) {
      parts.push(`${formatBytes(fields.bytes)}${fields.total ? ` / ${formatBytes(fields.total)}` : ''}`);
      parts.push(`${formatBytes(fields.bytes / secs)}/s`);
    }
    if (fields.docs !== undefined) parts.push(`${fields.docs.toLocaleString('en-US')} docs`);
    if (fields.fraction !== undefined) parts.push(percentEta(fields.fraction, secs));
    if (fields.extra) parts.push(fields.extra);
    this.stream.write(`\r\x1b[K${parts.join('  ')}`);
    this.shown = true;
  }

  done(): void {
    if (this.enabled && this.shown) this.stream.write('\r\x1b[K');
  }
}

export function formatBytes(n: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let i = 0;
  while (n >= 1000 && i < units.length - 1) { n /= 1000; i++; }
  return `${n.toFixed(i === 0 ? 0 : 1)} ${units[i]}`;
}

/** "42.0%  ETA 1m05s" (no ETA before 1% or with nothing done yet). */
export function percentEta(fraction: number, elapsedSeconds: number): string {
  const f = Math.min(Math.max(fraction, 0), 1);
  const pct = `${(f * 100).toFixed(1)}%`;
  if (f < 0.01 || f >= 1) return pct;
  return `${pct}  ETA ${formatDuration((elapsedSeconds * (1 - f)) / f)}`;
}

export function formatDuration(s: number): string {
  const t = Math.round(s);
  if (t < 60) return `${t}s`;
  if (t < 3600) return `${Math.floor(t / 60)}m${String(t % 60).padStart(2, '0')}s`;
  return `${Math.floor(t / 3600)}h${String(Math.floor((t % 3600) / 60)).padStart(2, '0')}m`;
}
