/**
 * Queue status (Flux's `flux queue enable/disable/start/stop`): enabled queues accept
 * submissions, started queues schedule. Kept in the plugin's persistent state so it
 * survives a restart of the manager.
 */
import { ErrorCode, JobtapError } from "jobtap/plugin";

/** One queue's status. */
export interface QueueStatus {
  enabled: boolean;
  started: boolean;
  /** Why it was disabled / stopped, as the admin said. */
  disableReason?: string;
  stopReason?: string;
}

/** The status of every configured queue; `""` stands for the anonymous queue. */
export type StatusTable = Record<string, QueueStatus>;

const OPEN: QueueStatus = { enabled: true, started: true };

/** Status for the configured queue names; unknown names dropped, new ones open. */
export function reconcile(saved: StatusTable | undefined, names: readonly string[]): StatusTable {
  const out: StatusTable = {};
  for (const n of names) out[n] = saved?.[n] ?? { ...OPEN };
  return out;
}

/** A service request `{ name?, reason? }`: the named queue, or all when name is absent. */
export function targets(table: StatusTable, payload: unknown, what: string): string[] {
  const name = (payload as { name?: unknown } | null)?.name;
  if (name === undefined) return Object.keys(table);
  if (typeof name !== "string" || !(name in table)) {
    throw new JobtapError(ErrorCode.INVALID_ARGUMENT, `${what}: unknown queue ${JSON.stringify(name)}`);
  }
  return [name];
}

/** The optional `reason` of a request. */
export function reasonOf(payload: unknown): string | undefined {
  const r = (payload as { reason?: unknown } | null)?.reason;
  return typeof r === "string" && r.length > 0 ? r : undefined;
}
