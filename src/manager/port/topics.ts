/**
 * The ONE topic table of jobtap (spec flux-jobtap §4), at the lowest layer so that both sides
 * of the manager/host seam derive from it: for every topic a plugin can register for, its
 * dispatch rule, its IN args, its OUT value and the job state it fires in.
 *
 * - the plugin host takes each concrete topic's runtime rule from `topicRule()` (how results
 *   combine, what a rejection without text says, which OUT keys it refuses);
 * - `p.on` handler types come from `TopicMap` (src/plugins/topics.ts), built from this table;
 * - the manager's `PluginPort.callJob<T>` returns `OutOf<T>`: the OUT the host has merged and
 *   checked, so the manager applies it without checking it again.
 *
 * Dispatch rules (one per topic):
 * - `validate`: the stack stops at the first rejection, whose message is the error
 *   (job.create at submit, job.validate, job.dependency.*, job.update.<key>, conf.update).
 * - `reduce`: every matching plugin runs in load order; OUT is merged at the top level,
 *   last writer wins (`annotations` too: a later plugin's object replaces, as in Flux).
 * - `notify`: OUT is ignored and errors are logged: the job's subscribers (`job.event.*`, in
 *   subscription order, stopping at the first failure as Flux does), or every plugin
 *   (`plugin.replay-done`, where the next plugin still runs).
 * - `query`: `plugin.query`, one plugin; its OUT is merged over `{ name, path }`.
 * - `custom`: topics outside `job.*` that one plugin calls on the others; reduce, and a
 *   rejection stops the stack.
 *
 * To add a topic: one line in TOPICS (or TOPIC_FAMILIES for a `prefix.<suffix>` family) with
 * its rule, IN and OUT types; the handler types, the host's behaviour and the manager's OUT
 * type follow. A topic the manager calls must also be fired from src/manager.
 */
import type { JobId } from "../base/ids.js";
import type { JobArgs } from "./records.js";
import type { State } from "../base/states.js";
import { explainError, pluginReason, type ReasonInput } from "./reasons.js";

/** How a topic's per-plugin results combine. */
export type DispatchRule = "validate" | "reduce" | "notify" | "query" | "custom";

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
  /** Set by the host, never by a handler: the plugin whose PRIORITY_UNAVAILABLE is the
   *  merged priority (`job why` names it). */
  unavailableBy?: string;
  reject?: never;
}

/**
 * `job.explain` OUT: why the job waits (or ended), in this plugin's words. Every plugin's
 * reasons are kept, in load order (the host stamps each with the plugin's name); a handler
 * that fails or misses its deadline leaves one labelled `explain-error` reason instead.
 */
export interface ExplainOut {
  reasons?: ReasonInput[];
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
/** IN of `job.state.<state>`: the posted entry and the state before it. */
export type StateArgs = EventArgs & { prev_state: State };
/** IN of `job.update.<key>`. */
export type UpdateKeyArgs = JobArgs & Required<Pick<JobArgs, "cred" | "key" | "value">>;
/** IN of `job.update`. */
export type UpdateArgs = JobArgs & Required<Pick<JobArgs, "updates">>;
/** IN of a custom topic: whatever the calling plugin passed, untouched. */
export type CustomArgs = Record<string, unknown>;

/** What a handler learns besides its args: the concrete topic, and the job if any. */
export interface CallInfo {
  topic: string;
  id?: JobId;
}

/** The runtime part of a topic's declaration: what the plugin host does with it. */
export interface TopicRule {
  readonly rule: DispatchRule;
  /** A `job.*` topic (its OUT `R` is refused unless `phase` is SCHED). */
  readonly job: boolean;
  /** The state a job is in when the topic fires (`job.state.<state>`), if fixed. */
  readonly phase?: State;
  /**
   * A `priority` OUT that is not an integer: `raise` a non-fatal exception on the job so the
   * stuck job is visible (Flux, on the generic job topics), or only `log` it.
   */
  readonly badPriority: "raise" | "log";
  /** Flux's message for a rejection that carried no text (spec §4.3). */
  readonly rejection: (plugin: string) => string;
  /**
   * A failing (or rejecting) plugin ends the stack call, as every Flux stack call does;
   * false only where each plugin is told on its own (`plugin.replay-done`).
   */
  readonly stopsAtError: boolean;
  /**
   * An OUT key whose arrays are concatenated in load order instead of replaced (`item`
   * checks and stamps each element with the plugin); a failing handler adds `error`'s
   * element there. Only `job.explain` has one.
   */
  readonly collect?: Collect;
}

/** How a collecting topic gathers its OUT key. */
export interface Collect {
  readonly key: string;
  item(plugin: string, raw: unknown): unknown;
  error(plugin: string, message: string): unknown;
}

/** One topic's declaration: the runtime rule, with IN and OUT as (phantom) types. */
export interface TopicSpec<A, O, K extends DispatchRule = DispatchRule> extends TopicRule {
  readonly rule: K;
  /** Never set: carries the IN type. */
  readonly in?: A;
  /** Never set: carries the OUT type (a rejection included where it is honoured). */
  readonly out?: O;
}

const byPlugin = (plugin: string) => `rejected by job-manager plugin '${plugin}'`;

interface RuleOptions {
  phase?: State;
  badPriority?: "raise" | "log";
  rejection?: (plugin: string) => string;
  stopsAtError?: boolean;
  collect?: Collect;
}

function spec<A, O, K extends DispatchRule>(rule: K, job: boolean, o: RuleOptions): TopicSpec<A, O, K> {
  const s: TopicRule = {
    rule,
    job,
    badPriority: o.badPriority ?? "log",
    rejection: o.rejection ?? byPlugin,
    stopsAtError: o.stopsAtError ?? true,
    ...(o.collect ? { collect: o.collect } : {}),
  };
  return (o.phase === undefined ? s : { ...s, phase: o.phase }) as TopicSpec<A, O, K>;
}

/** A job topic whose stack stops at the first rejection. */
const validate = <A, O>(o: RuleOptions = {}) => spec<A, O, "validate">("validate", true, o);
/** A job topic whose OUT values are merged over every plugin. */
const reduce = <A, O>(o: RuleOptions = {}) => spec<A, O, "reduce">("reduce", true, o);
/** A `job.state.<state>` topic: reduce, fixed phase, a bad priority raises. */
const state = <S extends State>(phase: S) =>
  reduce<StateArgs, S extends "SCHED" ? SchedOut : JobOut>({ phase, badPriority: "raise" });

/** The exact topics. `job.state.new` is declared but never fires (as in Flux). */
export const TOPICS = {
  "job.create": validate<JobArgs, JobOut | Rejection>(),
  "job.validate": validate<JobArgs, Rejection>(),
  "job.new": reduce<JobArgs, JobOut>({ badPriority: "raise" }),
  "job.priority.get": reduce<JobArgs, PriorityOut>(),
  /** Asked only by `job why` (never on the job's own path): every plugin says its part. */
  "job.explain": reduce<JobArgs, ExplainOut>({
    stopsAtError: false,
    collect: { key: "reasons", item: pluginReason, error: explainError },
  }),
  "job.inactive-add": reduce<JobArgs, JobOut>(),
  "job.inactive-remove": reduce<JobArgs, JobOut>(),
  "job.destroy": reduce<JobArgs, JobOut>(),
  "job.update": reduce<UpdateArgs, JobOut>(),
  "job.state.new": state("NEW"),
  "job.state.depend": state("DEPEND"),
  "job.state.priority": state("PRIORITY"),
  "job.state.sched": state("SCHED"),
  "job.state.run": state("RUN"),
  "job.state.cleanup": state("CLEANUP"),
  "job.state.inactive": state("INACTIVE"),
  "conf.update": spec<ConfArgs, Rejection, "validate">("validate", false, {
    rejection: (plugin) => `config rejected by ${plugin} jobtap plugin`,
  }),
  "plugin.query": spec<Record<string, never>, Record<string, unknown> | Rejection, "query">("query", false, {
    rejection: () => "plugin.query failed",
  }),
  "plugin.replay-done": spec<ReplayDoneArgs, void, "notify">("notify", false, { stopsAtError: false }),
} as const;

/** Topic families named by a variable suffix (`job.dependency.<scheme>` ...). */
export const TOPIC_FAMILIES = {
  "job.dependency.": validate<DependencyArgs, JobOut | Rejection>({
    rejection: () => "rejected by job-manager dependency plugin",
  }),
  "job.event.": spec<EventArgs, void, "notify">("notify", true, {}),
  "job.update.": validate<UpdateKeyArgs, UpdateKeyOut | Rejection>({
    rejection: () => "update rejected by job-manager plugin",
  }),
} as const;

/** Any other `job.*` name (a glob's view of the job topics): reduce. */
const OTHER_JOB_TOPIC: TopicRule = reduce<JobArgs, JobOut>();
/** A topic outside `job.*` that plugins call on each other (`p.call`). */
export const CUSTOM_TOPIC = spec<CustomArgs, Record<string, unknown> | Rejection, "custom">("custom", false, {});

export type Topics = typeof TOPICS;
export type TopicFamilies = typeof TOPIC_FAMILIES;
/** An exact topic name of the table. */
export type TopicName = keyof Topics;
/** A topic of a family: `job.dependency.${string}` ... */
export type FamilyTopic = `${keyof TopicFamilies}${string}`;

const FAMILY_PREFIXES = Object.keys(TOPIC_FAMILIES) as Array<keyof TopicFamilies>;

/** The rule of a concrete topic name (never a glob): exact, then family, then job/custom. */
export function topicRule(topic: string): TopicRule {
  const exact = (TOPICS as Record<string, TopicRule>)[topic];
  if (exact !== undefined) return exact;
  if (!topic.startsWith("job.")) return CUSTOM_TOPIC;
  for (const prefix of FAMILY_PREFIXES) if (topic.startsWith(prefix)) return TOPIC_FAMILIES[prefix];
  return OTHER_JOB_TOPIC;
}

/** The dispatch rule of a concrete topic name. */
export function topicKind(topic: string): DispatchRule {
  return topicRule(topic).rule;
}

// --- the manager's side: typed stack calls ----------------------------------------------

/** The declaration of a topic name: exact, else its family's. */
export type SpecOf<T extends string> = T extends TopicName
  ? Topics[T]
  : T extends `job.dependency.${string}`
    ? TopicFamilies["job.dependency."]
    : T extends `job.event.${string}`
      ? TopicFamilies["job.event."]
      : T extends `job.update.${string}`
        ? TopicFamilies["job.update."]
        : typeof CUSTOM_TOPIC;

/** The job topics the manager calls (`PluginPort.callJob`). */
export type JobTopic = Extract<TopicName, `job.${string}`> | `job.dependency.${string}` | `job.update.${string}`;

/**
 * The merged OUT of a stack call over topic T, as the manager receives it: the handlers' OUT
 * without the rejection (which becomes `errmsg`), checked by the host (an integer
 * `priority`, an object or null `annotations`, `R` only from SCHED).
 */
export type OutOf<T extends string> = MergedOut<SpecOf<T> extends TopicSpec<unknown, infer O> ? O : never>;

type MergedOut<O> = [Exclude<O, Rejection | void | undefined>] extends [never]
  ? { errmsg?: string }
  : WithoutReject<Exclude<O, Rejection | void | undefined>>;
type WithoutReject<O> = O extends unknown ? Omit<O, "reject"> & { errmsg?: string } : never;

/** The topics whose OUT the engine applies itself (priority, annotations, R). */
export type AppliedTopic =
  | Extract<TopicName, `job.state.${string}`>
  | "job.create" | "job.new" | "job.update" | "job.inactive-add" | "job.inactive-remove" | "job.destroy";
