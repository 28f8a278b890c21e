/**
 * "Why is my job not running?" (issue 36): the one typed structure every layer answers in.
 * The manager's own producers (state machine, scheduler, the end of an inactive job) and the
 * plugins (`job.explain`, topics.ts) each contribute reasons; the CLI, the socket protocol
 * and the library return the same `Explanation`.
 *
 * It sits with the port types because both sides of the manager/host seam build reasons:
 * the manager's producers and the host's merge of `job.explain` results.
 */

/** Which layer a reason comes from, in the order an answer lists them. */
export const REASON_LAYERS = ["state", "plugin", "scheduler", "exec", "end"] as const;
export type ReasonLayer = (typeof REASON_LAYERS)[number];

/** A figure of a reason: a plain JSON scalar (so it crosses a worker and the wire as is). */
export type Figure = string | number | boolean | null;

/**
 * One reason a job waits (or why it ended). `text` is one line for people; `code` and
 * `figures` are for programs (stable names, documented in docs/why.md).
 */
export interface Reason {
  layer: ReasonLayer;
  /** Who says so: `manager`, `scheduler`, or the plugin's name (set by the host). */
  source: string;
  /** Stable, kebab-case: `held`, `dependency`, `begin-time`, `queue-stopped` ... */
  code: string;
  text: string;
  figures: Record<string, Figure>;
  /**
   * Names the thing explained (`dependency:after-ok=ƒ2`, `queue-stopped:batch`): a plugin
   * reason with the same key replaces the manager's generic one, in its place.
   */
  key?: string;
}

/** A plugin's reason as it returns it: `source` is set by the host, `layer` defaults to plugin. */
export interface ReasonInput {
  code: string;
  text: string;
  layer?: ReasonLayer;
  figures?: Record<string, Figure>;
  key?: string;
}

/** One job's answer. */
export interface Explanation {
  /** f58. */
  id: string;
  state: string;
  /** Ordered: state machine first, then plugins in load order, scheduler, executors, end. */
  reasons: Reason[];
}

const LAYERS = new Set<string>(REASON_LAYERS);

/**
 * A plugin's returned reason, checked and stamped with its source; a malformed one becomes
 * an `explain-error` reason naming what was wrong, so the answer still comes back.
 */
export function pluginReason(plugin: string, raw: unknown): Reason {
  const r = raw as Partial<ReasonInput> | null;
  if (typeof r !== "object" || r === null || typeof r.code !== "string" || typeof r.text !== "string") {
    return explainError(plugin, "a reason needs string `code` and `text`");
  }
  const layer = typeof r.layer === "string" && LAYERS.has(r.layer) ? r.layer : "plugin";
  const reason: Reason = { layer, source: plugin, code: r.code, text: r.text, figures: scalarFigures(r.figures) };
  if (typeof r.key === "string") reason.key = r.key;
  return reason;
}

/** The labelled line that stands in for a plugin whose explain handler failed or hung. */
export function explainError(plugin: string, message: string): Reason {
  return { layer: "plugin", source: plugin, code: "explain-error", text: `plugin ${plugin} could not explain: ${message}`, figures: {} };
}

/** Only scalar figures are kept (an object would not print in one line). */
function scalarFigures(f: unknown): Record<string, Figure> {
  const out: Record<string, Figure> = {};
  if (typeof f !== "object" || f === null) return out;
  for (const [k, v] of Object.entries(f)) {
    if (v === null || typeof v === "string" || typeof v === "boolean" || (typeof v === "number" && Number.isFinite(v))) out[k] = v;
  }
  return out;
}
