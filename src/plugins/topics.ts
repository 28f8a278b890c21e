/**
 * The ONE typed topic map of the jobtap host (spec flux-jobtap §4).
 *
 * Every topic a plugin can register for is declared here with its IN args, the OUT keys the
 * job manager honours, and its combination rule. Handler types (`p.on`), the stack engine,
 * the plugin context and the test host all derive from this file; nothing else names topics
 * with free-form strings.
 *
 * Combination rules (one per topic, stated in the type):
 * - `validate`: the stack stops at the first rejection, whose message is the error
 *   (job.create at submit, job.validate, job.dependency.*, job.update.<key>, conf.update).
 * - `reduce`: every matching plugin runs in load order; OUT is merged at the top level,
 *   last writer wins, `annotations` merge key by key (null values kept so they delete).
 * - `notify`: OUT is ignored and errors are logged, the next plugin still runs: the job's
 *   subscribers (`job.event.*`), or every plugin (`plugin.replay-done`).
 * - `query`: `plugin.query`, one plugin; its OUT is merged over `{ name, path }`.
 * - `custom`: topics outside `job.*` that one plugin calls on the others; reduce, and a
 *   rejection stops the stack.
 */
import type { JobId } from "../manager/ids.js";
import type { JobArgs } from "../manager/port.js";
import type { State } from "../manager/states.js";

/** How a topic's per-plugin results combine. */
export type TopicKind = "validate" | "reduce" | "notify" | "query" | "custom";

/**
 * A rejection: the one typed way a handler refuses. Build it with `p.reject(message?)` or
 * return `{ reject: "why" }`; an empty message gets Flux's default for the topic.
 */
export interface Rejection {
  reject: string;
}

/** OUT keys honoured on the generic job topics (spec §4.2). */
export interface JobOut {
  /** >= 0 reprioritizes a job in PRIORITY/SCHED; PRIORITY_UNAVAILABLE keeps it waiting. */
  priority?: number;
  /** Merged into the job's annotations; a null value deletes that key. */
  annotations?: Record<string, unknown> | null;
  /** Rejections are not honoured on notification topics: raise an exception instead. */
  reject?: never;
}

/** `job.state.sched` (and globs that may match it) may also supply R. */
export interface SchedOut extends JobOut {
  R?: Record<string, unknown>;
}

/** `job.priority.get`: only `priority` is read. */
export interface PriorityOut {
  priority?: number;
  reject?: never;
}

/** `job.update.<key>` OUT (spec §10). */
export interface UpdateKeyOut {
  /** Skip re-validation of the updated jobspec for this key. */
  validated?: boolean;
  /** Ask the scheduler whether the updated job is still feasible. */
  feasibility?: boolean;
  /** Extra jobspec updates to apply with the user's (period-delimited paths). */
  updates?: Record<string, unknown>;
}

/** `plugin.replay-done` IN: why jobs were just replayed (beyond Flux, docs/semantics.md). */
export interface ReplayDoneArgs {
  /** `restart`: every plugin, after the manager's restart callbacks; `load`: the newly
   *  loaded plugin only, after its runtime-load replay. Both come before reprioritize-all. */
  reason: "restart" | "load";
}

/** `conf.update` IN: the whole instance configuration. */
export interface ConfArgs {
  conf: Record<string, unknown>;
}

/** IN of `job.dependency.<scheme>`: `dependency` is always present. */
export type DependencyArgs = JobArgs & Required<Pick<JobArgs, "dependency">>;
/** IN of `job.event.<name>` and `job.state.<state>`: the posted entry is always present. */
export type EventArgs = JobArgs & Required<Pick<JobArgs, "entry">>;
/** IN of `job.update.<key>`. */
export type UpdateKeyArgs = JobArgs & Required<Pick<JobArgs, "cred" | "key" | "value">>;
/** IN of a custom topic: whatever the calling plugin passed, untouched. */
export type CustomArgs = Record<string, unknown>;

/** What a handler learns besides its args: the concrete topic, and the job if any. */
export interface CallInfo {
  topic: string;
  id?: JobId;
}

/** One topic's declaration: IN args, OUT value (rejection included when allowed), kind. */
export interface Topic<A, O, K extends TopicKind> {
  args: A;
  out: O;
  kind: K;
}

type StateTopicDef<S extends State> = Topic<
  EventArgs & { prev_state: State },
  S extends "SCHED" ? SchedOut : JobOut,
  "reduce"
>;

/** The exact topics. `job.state.new` is declared but never fires (as in Flux). */
export interface TopicMap {
  "job.create": Topic<JobArgs, JobOut | Rejection, "validate">;
  "job.validate": Topic<JobArgs, Rejection, "validate">;
  "job.new": Topic<JobArgs, JobOut, "reduce">;
  "job.priority.get": Topic<JobArgs, PriorityOut, "reduce">;
  "job.inactive-add": Topic<JobArgs, JobOut, "reduce">;
  "job.inactive-remove": Topic<JobArgs, JobOut, "reduce">;
  "job.destroy": Topic<JobArgs, JobOut, "reduce">;
  "job.update": Topic<JobArgs & Required<Pick<JobArgs, "updates">>, JobOut, "reduce">;
  "job.state.new": StateTopicDef<"NEW">;
  "job.state.depend": StateTopicDef<"DEPEND">;
  "job.state.priority": StateTopicDef<"PRIORITY">;
  "job.state.sched": StateTopicDef<"SCHED">;
  "job.state.run": StateTopicDef<"RUN">;
  "job.state.cleanup": StateTopicDef<"CLEANUP">;
  "job.state.inactive": StateTopicDef<"INACTIVE">;
  "conf.update": Topic<ConfArgs, Rejection, "validate">;
  "plugin.query": Topic<Record<string, never>, Record<string, unknown> | Rejection, "query">;
  "plugin.replay-done": Topic<ReplayDoneArgs, void, "notify">;
}

/** Topic families named by a variable suffix. */
export type DependencyTopic = Topic<DependencyArgs, JobOut | Rejection, "validate">;
export type EventTopic = Topic<EventArgs, void, "notify">;
export type UpdateKeyTopic = Topic<UpdateKeyArgs, UpdateKeyOut | Rejection, "validate">;
/** A glob over job topics (`job.*`, `job.state.*`): the union of what they may see/return. */
export type JobGlobTopic = Topic<JobArgs, SchedOut | UpdateKeyOut | Rejection, "reduce">;
export type CustomTopic = Topic<CustomArgs, Record<string, unknown> | Rejection, "custom">;
/** A glob that may match anything (`*`, `*.update`). */
export type AnyTopic = Topic<
  JobArgs | ConfArgs | CustomArgs,
  SchedOut | UpdateKeyOut | Record<string, unknown> | Rejection,
  "custom"
>;

type GlobChar = "*" | "?" | "[";
type HasGlob<P extends string> = P extends `${string}${GlobChar}${string}` ? true : false;

/** Resolves a topic name or glob, as given to `p.on`, to its declaration. */
export type TopicFor<P extends string> = P extends keyof TopicMap
  ? TopicMap[P]
  : HasGlob<P> extends true
    ? P extends `job.dependency.${string}`
      ? DependencyTopic
      : P extends `job.event.${string}`
        ? EventTopic
        : P extends `job.update.${string}`
          ? UpdateKeyTopic
          : P extends `job.state.${string}`
            ? StateTopicDef<"SCHED">
            : P extends `job.${string}`
              ? JobGlobTopic
              : AnyTopic
    : P extends `job.dependency.${string}`
      ? DependencyTopic
      : P extends `job.event.${string}`
        ? EventTopic
        : P extends `job.update.${string}`
          ? UpdateKeyTopic
          : P extends `job.${string}`
            ? never // not a job topic jobtap ever calls: a typo
            : CustomTopic;

/** A handler's return: its OUT value, nothing, or a Promise of either (async handlers). */
export type HandlerResult<O> = O | void | Promise<O | void>;

/** The handler type for a topic name or glob. */
export type HandlerFor<P extends string> = [TopicFor<P>] extends [never]
  ? never
  : TopicFor<P> extends Topic<infer A, infer O, TopicKind>
    ? (args: A, call: CallInfo) => HandlerResult<O>
    : never;

/** Any handler, as the host stores it (the typed form is checked at `p.on`). */
export type AnyHandler = (args: never, call: CallInfo) => unknown;

const STATE_TOPIC = /^job\.state\./;

/** The combination rule of a concrete topic name (what the stack engine applies). */
export function topicKind(topic: string): TopicKind {
  if (topic.startsWith("job.")) {
    if (topic === "job.create" || topic === "job.validate") return "validate";
    if (topic.startsWith("job.dependency.")) return "validate";
    if (topic.startsWith("job.update.")) return "validate";
    if (topic.startsWith("job.event.")) return "notify";
    return "reduce";
  }
  if (topic === "conf.update") return "validate";
  if (topic === "plugin.query") return "query";
  if (topic === "plugin.replay-done") return "notify";
  return "custom";
}

/** True for `job.state.<state>` topics (where a bad `priority` type raises, spec §4.2). */
export function isStateTopic(topic: string): boolean {
  return STATE_TOPIC.test(topic);
}

/**
 * Flux's message for a rejection that carried no text, per topic (spec §4.3).
 * `plugin` is used where Flux names the plugin.
 */
export function defaultRejection(topic: string, plugin: string): string {
  if (topic === "job.validate" || topic === "job.create") {
    return `rejected by job-manager plugin '${plugin}'`;
  }
  if (topic.startsWith("job.dependency.")) return "rejected by job-manager dependency plugin";
  if (topic.startsWith("job.update.")) return "update rejected by job-manager plugin";
  if (topic === "conf.update") return `config rejected by ${plugin} jobtap plugin`;
  if (topic === "plugin.query") return "plugin.query failed";
  return `rejected by job-manager plugin '${plugin}'`;
}
