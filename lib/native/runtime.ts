import { native } from './addon';

/** Threads used by batch calls (the process-wide native pool). */
export function getThreads(): number {
  return native.getThreads();
}

/** Sets the threads used by batch calls; 0 restores the default (NEARDUP_THREADS or the core count). */
export function setThreads(n: number): void {
  native.setThreads(n);
}

/** Which SIMD kernels are in use ('avx2' or 'portable') and the default thread count. */
export function runtimeInfo(): { simd: string; defaultThreads: number } {
  return native.runtimeInfo();
}
