/**
 * The plugin registry: who is loaded, in which order, and which of their handlers a topic
 * reaches. Flux's rules: plugins are called in load order (builtins first) and within one
 * plugin only the first handler whose glob matches runs. The answer is cached per topic, with
 * the topic's rule from the table, so a stack call costs one map lookup.
 *
 * The registry never calls a plugin; the dispatcher (dispatch.ts) does.
 */
import { topicRule, type TopicRule } from "../manager/port/topics.js";
import type { PluginRecord } from "./record.js";
import { compileNameGlob } from "./record.js";
import type { StackEntry } from "./stack.js";

/** What a concrete topic reaches: its rule and one entry per plugin that handles it. */
export interface TopicHandlers {
  readonly topic: string;
  readonly rule: TopicRule;
  readonly entries: readonly StackEntry[];
  /** Stack calls of this topic left untimed before the next timed one (timing.ts). */
  untimed: number;
}

/** Bound on cached topics (job.update.<key>, job.event.<name> are open-ended). */
const MAX_CACHED_TOPICS = 4096;

/** The loaded plugins in load order and the per-topic match cache. */
export class PluginRegistry {
  private list: PluginRecord[] = [];
  private readonly cache = new Map<string, TopicHandlers>();
  /** `job.event.<name>` by event name: no topic string is built per event. */
  private readonly events = new Map<string, TopicHandlers>();
  /**
   * The last topic looked up and its answer: the manager asks `matches(topic)` and then
   * calls the same topic, so the second lookup is a string comparison, not a map probe.
   */
  private lastTopic: string | undefined;
  private lastHandlers: TopicHandlers | undefined;

  /** Plugins in load order (builtins first). */
  get plugins(): readonly PluginRecord[] {
    return this.list;
  }

  /** The plugin with this list name, if loaded. */
  find(name: string): PluginRecord | undefined {
    return this.list.find((p) => p.name === name);
  }

  /** The plugin whose services answer to `name` (its service namespace or list name). */
  findService(name: string): PluginRecord | undefined {
    return this.list.find((p) => p.internalName === name || p.name === name);
  }

  /** Plugins matching a name or glob (`*` spares builtins), or `all` non-builtins. */
  matching(nameOrGlob: string): PluginRecord[] {
    if (nameOrGlob === "all") return this.list.filter((p) => !p.builtin);
    const match = compileNameGlob(nameOrGlob);
    return this.list.filter((p) => match(p.name));
  }

  /** True if a plugin named `name` would match `nameOrGlob` (as `matching` decides). */
  matchesName(nameOrGlob: string, name: string): boolean {
    return compileNameGlob(nameOrGlob)(name);
  }

  /** Appends a plugin to the load order. */
  add(rec: PluginRecord): void {
    this.list.push(rec);
    this.invalidate();
  }

  /** Puts `rec` where `old` is in the load order (an isolated plugin's restart). */
  replace(old: PluginRecord, rec: PluginRecord): void {
    this.list = this.list.map((p) => (p === old ? rec : p));
    this.invalidate();
  }

  /** Takes a plugin out of the load order. */
  delete(rec: PluginRecord): void {
    this.list = this.list.filter((p) => p !== rec);
    this.invalidate();
  }

  /** Reorders the load order (stable) by a rank; used to put builtins back first. */
  sortBy(rank: (rec: PluginRecord) => number): void {
    this.list.sort((a, b) => rank(a) - rank(b));
    this.invalidate();
  }

  /** One entry per plugin that has a handler matching `topic`: its first match. */
  handlers(topic: string): TopicHandlers {
    if (topic === this.lastTopic) return this.lastHandlers!;
    const hit = this.cache.get(topic);
    if (hit !== undefined) return this.remember(hit);
    const entries: StackEntry[] = [];
    for (const plugin of this.list) {
      const entry = handlerOf(plugin, topic);
      if (entry !== undefined) entries.push(entry);
    }
    if (this.cache.size >= MAX_CACHED_TOPICS) this.cache.clear();
    const result: TopicHandlers = { topic, rule: topicRule(topic), entries, untimed: 0 };
    this.cache.set(topic, result);
    return this.remember(result);
  }

  /** `job.event.<name>`'s handlers, found by the event name. */
  eventHandlers(name: string): TopicHandlers {
    const hit = this.events.get(name);
    if (hit !== undefined) return hit;
    const h = this.handlers(`job.event.${name}`);
    if (this.events.size >= MAX_CACHED_TOPICS) this.events.clear();
    this.events.set(name, h);
    return h;
  }

  private remember(h: TopicHandlers): TopicHandlers {
    this.lastTopic = h.topic;
    this.lastHandlers = h;
    return h;
  }

  /** Must be called whenever a plugin's handlers change (`p.on`). */
  invalidate(): void {
    this.cache.clear();
    this.events.clear();
    this.lastTopic = undefined;
    this.lastHandlers = undefined;
  }
}

/** One plugin's first handler matching `topic`, as a stack entry. */
export function handlerOf(plugin: PluginRecord, topic: string): StackEntry | undefined {
  const h = plugin.handlers.find((e) => e.matches(topic));
  // `cell` is set at the first timed call; present from the start so entries keep one shape.
  return h === undefined ? undefined : { plugin, fn: h.fn, firstArgOnly: h.firstArgOnly === true, cell: undefined };
}
