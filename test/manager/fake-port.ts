/**
 * A minimal PluginPort for manager tests: one handler per exact topic (or "job.state.*"-
 * style prefix), as a single plugin would register them. It is not the plugin host; it only
 * lets tests observe and steer the manager's calls.
 */
import type { JobId } from "../../src/manager/base/ids.js";
import type { ManagerPort, PluginPort, StackOut, StackResult } from "../../src/manager/port/port.js";
import type { JobArgs } from "../../src/manager/port/records.js";
import type { JobTopic, OutOf } from "../../src/manager/port/topics.js";

export type Handler = (args: JobArgs, mgr: ManagerPort) => StackOut | void | { error: string; out?: StackOut } | Promise<StackOut | void>;

export interface FakePort extends PluginPort {
  calls: Array<{ topic: string; id: JobId; state: string }>;
  mgr?: ManagerPort;
}

/** Builds a port; handlers keyed by topic ("job.state.priority") or prefix ending in "*". */
export function fakePort(handlers: Record<string, Handler>, opts: { priorityDefault?: boolean } = {}): (mgr: ManagerPort) => FakePort {
  return (mgr) => {
    const all: Record<string, Handler> = { ...handlers };
    if (opts.priorityDefault !== false && !all["job.state.priority"]) all["job.state.priority"] = (a) => ({ priority: a.urgency });
    if (opts.priorityDefault !== false && !all["job.priority.get"]) all["job.priority.get"] = (a) => ({ priority: a.urgency });
    const find = (topic: string) =>
      all[topic] ?? Object.entries(all).find(([k]) => k.endsWith("*") && topic.startsWith(k.slice(0, -1)))?.[1];
    const toResult = (r: ReturnType<Handler> extends infer T ? Awaited<T> : never): StackResult => {
      if (r && typeof r === "object" && "error" in r && typeof r.error === "string") {
        return { handled: 1, error: { plugin: "fake", message: r.error }, out: (r.out as StackOut) ?? {} };
      }
      return { handled: 1, out: (r as StackOut) ?? {} };
    };
    const port: FakePort = {
      calls: [],
      mgr,
      matches: (topic) => find(topic) !== undefined,
      // OUT passes unchecked: the manager trusts its port (the real host checks OUT).
      callJob<T extends JobTopic>(topic: T, args: JobArgs): StackResult<OutOf<T>> | Promise<StackResult<OutOf<T>>> {
        port.calls.push({ topic, id: args.id, state: args.state });
        const h = find(topic);
        if (!h) return { handled: 0, out: {} } as never;
        const r = h(args, mgr);
        return (r instanceof Promise ? r.then((v) => toResult(v)) : toResult(r)) as never;
      },
      notifyEvent(args) {
        const h = find(`job.event.${args.entry?.name}`);
        if (h) void h(args, mgr);
      },
      jobGone: () => undefined,
    };
    return port;
  };
}
