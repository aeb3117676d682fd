// The sidecar's compute runs below the editor's priority. On two cores the engine's threads
// and the editor (extension host, renderer) want the same CPUs: measured in code-server, the
// extension host's garbage collections and VS Code's own polling were stretched past 50 ms
// while the engine held both cores. A nicer engine still gets every idle cycle; it only yields
// when the editor has work (BENCHMARKS.md, session 10).
import { readdirSync } from 'node:fs';
import { setPriority } from 'node:os';

/**
 * Raises this process's niceness to `niceness` (0 = unchanged). On Linux niceness is per
 * thread and a new thread inherits its creator's, so every thread running now is set and the
 * engine's pool, created later, follows; elsewhere it is the whole process.
 */
export function lowerProcessPriority(niceness: number): void {
  if (niceness <= 0) return;
  try {
    if (process.platform === 'linux') {
      for (const tid of readdirSync('/proc/self/task')) setPriority(Number(tid), niceness);
    } else {
      setPriority(process.pid, niceness);
    }
  } catch {
    // Not allowed or not supported: the engine runs at normal priority, as before.
  }
}
