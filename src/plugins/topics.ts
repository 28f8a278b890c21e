/**
 * The plugin-facing types of the topic table (src/manager/port/topics.ts): what `p.on` accepts
 * for a topic name or glob, derived from the one table, so a handler of the wrong shape
 * cannot be registered. Nothing here names a topic's rule again.
 */
import type { DispatchRule, SpecOf, TopicFamilies, TopicName, Topics, TopicSpec } from "../manager/port/topics.js";
import type {
  CallInfo,
  ConfArgs,
  CustomArgs,
  JobOut,
  Rejection,
  SchedOut,
  UpdateKeyOut,
} from "../manager/port/topics.js";
import type { JobArgs } from "../manager/port/records.js";

export type {
  CallInfo,
  ConfArgs,
  CustomArgs,
  DependencyArgs,
  EventArgs,
  JobOut,
  PriorityOut,
  Rejection,
  ReplayDoneArgs,
  SchedOut,
  StateArgs,
  UpdateArgs,
  UpdateKeyArgs,
  UpdateKeyOut,
} from "../manager/port/topics.js";
export { topicKind, topicRule } from "../manager/port/topics.js";

/** How a topic's per-plugin results combine (the table's dispatch rule). */
export type TopicKind = DispatchRule;

/** One topic's declaration as handler types see it: IN args, OUT value, rule. */
export interface Topic<A, O, K extends TopicKind> {
  args: A;
  out: O;
  kind: K;
}

/** A table declaration as a Topic. */
type AsTopic<S> = S extends TopicSpec<infer A, infer O, infer K> ? Topic<A, O, K> : never;

/** The exact topics, from the table. `job.state.new` is declared but never fires (as in Flux). */
export type TopicMap = { [K in TopicName]: AsTopic<Topics[K]> };

/** Topic families named by a variable suffix. */
export type DependencyTopic = AsTopic<TopicFamilies["job.dependency."]>;
export type EventTopic = AsTopic<TopicFamilies["job.event."]>;
export type UpdateKeyTopic = AsTopic<TopicFamilies["job.update."]>;
/** A glob over job topics (`job.*`, `job.state.*`): the union of what they may see/return. */
export type JobGlobTopic = Topic<JobArgs, SchedOut | UpdateKeyOut | Rejection, "reduce">;
export type CustomTopic = AsTopic<SpecOf<"custom">>;
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
            ? TopicMap["job.state.sched"]
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
