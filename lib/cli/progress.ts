// Progress on stderr, only when stderr is a terminal (never in pipes or logs), at most 5 updates a second.
export class Progress {
  private readonly enabled: boolean;
  private last = 0;
  private readonly start = Date.now();
  private shown = false;

  constructor(private readonly label: string, enabled = Boolean(process.stderr.isTTY)) {
    this.enabled = enabled;
  }

  update(fields: { bytes?: number; docs?: number; total?: number; extra?: string }, force = false): void {
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
    if (fields.extra) parts.push(fields.extra);
    process.stderr.write(`\r\x1b[K${parts.join('  ')}`);
    this.shown = true;
  }

  done(): void {
    if (this.enabled && this.shown) process.stderr.write('\r\x1b[K');
  }
}

export function formatBytes(n: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let i = 0;
  while (n >= 1000 && i < units.length - 1) { n /= 1000; i++; }
  return `${n.toFixed(i === 0 ? 0 : 1)} ${units[i]}`;
}
