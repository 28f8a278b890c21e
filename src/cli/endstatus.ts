/**
 * How the CLI words a finished job's wait status, one formatter for every command that
 * shows one (`jobs`, `wait`, `submit --wait/--watch`). A job killed by a signal has no exit
 * code: its wait status's low seven bits name the signal, which is what is shown (Flux's
 * `returncode` is then minus the signal number, `flux jobs` names the signal).
 */
import { constants } from "node:os";

/** Signal number → name (the first name of each number: SIGABRT before SIGIOT). */
const SIGNAL_NAMES = new Map<number, string>();
for (const [name, n] of Object.entries(constants.signals)) if (!SIGNAL_NAMES.has(n)) SIGNAL_NAMES.set(n, name);

/** `SIGTERM` for 15; `signal 77` for a number with no name. */
export function signalName(n: number): string {
  return SIGNAL_NAMES.get(n) ?? `signal ${n}`;
}

/** The signal that killed the job, or 0 if it exited (or the status is unknown). */
export function termSignal(waitstatus: number | undefined): number {
  return waitstatus === undefined ? 0 : waitstatus & 0x7f;
}

/** `killed by SIGTERM`, `exit 3`, or undefined for a zero or unknown wait status. */
export function describeWaitStatus(waitstatus: number | undefined): string | undefined {
  if (waitstatus === undefined || waitstatus === 0) return undefined;
  const sig = termSignal(waitstatus);
  return sig !== 0 ? `killed by ${signalName(sig)}` : `exit ${(waitstatus >> 8) & 0xff}`;
}
