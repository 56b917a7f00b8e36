// Preload for benchmarks (node --require bench/main-thread-cpu.cjs ...): at exit, prints the CPU seconds of the
// process's main thread (the JavaScript thread) to stderr as "MAINTHREAD <seconds>" (Linux: /proc). The rest
// of the process's CPU time ran on other threads (the native pool, libuv's pool).
const fs = require('node:fs');
process.on('exit', () => {
  try {
    const stat = fs.readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(f[11]) + Number(f[12]);  // utime + stime (fields 14 and 15)
    process.stderr.write(`MAINTHREAD ${(ticks / 100).toFixed(2)}\n`);
  } catch {
    // not Linux
  }
});
