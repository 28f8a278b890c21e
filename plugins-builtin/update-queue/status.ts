/**
 * Queue status (Flux's `flux queue enable/disable/start/stop`): enabled queues accept
 * submissions, started queues schedule. Kept in the plugin's persistent state so it
 * survives a restart of the manager.
 */
import { ErrorCode, JobtapError, localTime, type ExplainOut, type ReasonInput } from "jobtap/plugin";

/** One queue's status. */
export interface QueueStatus {
  enabled: boolean;
  started: boolean;
  /** Why it was disabled / stopped, as the admin said. */
  disableReason?: string;
  stopReason?: string;
  /** Seconds since the epoch when it was last disabled / stopped (`job why` says since when). */
  disabledAt?: number;
  stoppedAt?: number;
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

/**
 * `job.explain`: the job's queue (or the parent a virtual queue schedules through) stopped
 * or disabled, since when and why. The stop line has the manager's key, which it replaces.
 */
export function explainQueue(q: string, table: StatusTable, parents: ReadonlyMap<string, string>): ExplainOut | undefined {
  const reasons: ReasonInput[] = [];
  const s = table[q];
  const parent = parents.get(q);
  const name = q === "" ? "the anonymous queue" : `queue ${q}`;
  if (s !== undefined && !s.started) reasons.push(stopped(q, name, s));
  else if (parent !== undefined && table[parent]?.started === false) {
    const r = stopped(parent, `queue ${parent} (the parent of ${q})`, table[parent]!);
    reasons.push({ ...r, key: `queue-stopped:${q}` });
  }
  if (s !== undefined && !s.enabled) {
    const since = s.disabledAt === undefined ? "" : ` since ${localTime(s.disabledAt)}`;
    reasons.push({
      layer: "state",
      code: "queue-disabled",
      text: `${name} is disabled${since}${s.disableReason ? `: ${s.disableReason}` : ""} (it takes no new jobs)`,
      figures: { queue: q, since: s.disabledAt ?? null, reason: s.disableReason ?? null },
    });
  }
  return reasons.length === 0 ? undefined : { reasons };
}

function stopped(q: string, name: string, s: QueueStatus): ReasonInput {
  const since = s.stoppedAt === undefined ? "" : ` since ${localTime(s.stoppedAt)}`;
  return {
    layer: "state",
    code: "queue-stopped",
    key: `queue-stopped:${q}`,
    text: `${name} is stopped${since}${s.stopReason ? `: ${s.stopReason}` : ""}`,
    figures: { queue: q, since: s.stoppedAt ?? null, reason: s.stopReason ?? null },
  };
}
