/**
 * Type tests: the topic map decides what a handler may take and return. Each
 * `@ts-expect-error` line must fail to compile (tsc -p tsconfig.test.json checks this file),
 * so a handler of the wrong shape cannot be registered.
 */
import { describe, expectTypeOf, it } from "vitest";
import type {
  CallInfo,
  HandlerFor,
  JobArgs,
  PluginContext,
  Rejection,
  UpdateKeyOut,
} from "jobtap/plugin";
import { topicKind } from "../../src/plugins/topics.js";

/** Registers handlers against a context type only; never run. */
function register(p: PluginContext): void {
  // Correct shapes compile.
  p.on("job.state.priority", (job) => ({ priority: job.urgency }));
  p.on("job.state.priority", () => p.priorityUnavailable());
  p.on("job.validate", () => p.reject("no"));
  p.on("job.validate", () => undefined);
  p.on("job.state.sched", () => ({ R: { execution: {} } }));
  p.on("job.update.attributes.system.duration", (job) => ({ validated: job.value !== 0 }));
  p.on("job.event.*", (job) => void job.entry.name);
  p.on("job.dependency.after", (job) => void job.dependency.scheme);
  p.on("conf.update", ({ conf }) => (conf.x ? p.reject() : undefined));
  p.on("job.*", async (job) => ({ annotations: { seen: job.id.toString() } }));
  p.on("fairshare.usage", (args) => ({ usage: Number(args.user) }));

  // @ts-expect-error priority must be a number
  p.on("job.state.priority", () => ({ priority: "high" }));
  // @ts-expect-error job.validate can only reject (or return nothing)
  p.on("job.validate", () => ({ priority: 5 }));
  // @ts-expect-error rejections are not honoured on notification topics
  p.on("job.state.run", () => p.reject("late"));
  // @ts-expect-error a handler's args are the topic's IN args, not a number
  p.on("job.new", (n: number) => n);
  // @ts-expect-error R is only honoured in job.state.sched
  p.on("job.state.run", () => ({ R: {} }));
  // @ts-expect-error job.event.* is a notification: no OUT
  p.on("job.event.start", () => ({ priority: 1 }));
  // @ts-expect-error not a topic jobtap calls (typo of job.validate)
  p.on("job.valdiate", () => undefined);
  // @ts-expect-error async handlers are checked too
  p.on("job.state.priority", async () => ({ priority: "x" }));
}

describe("handler types", () => {
  it("derives args and results from the topic map", () => {
    expectTypeOf<Parameters<HandlerFor<"job.new">>[0]>().toEqualTypeOf<JobArgs>();
    expectTypeOf<Parameters<HandlerFor<"job.new">>[1]>().toEqualTypeOf<CallInfo>();
    expectTypeOf<Parameters<HandlerFor<"job.state.run">>[0]["entry"]>().not.toBeUndefined();
    expectTypeOf<Rejection>().toExtend<ReturnType<HandlerFor<"job.validate">>>();
    expectTypeOf<UpdateKeyOut>().toExtend<ReturnType<HandlerFor<"job.update.x">>>();
    expectTypeOf<HandlerFor<"job.valdiate">>().toBeNever();
    expectTypeOf(register).toBeFunction();
  });

  it("gives each concrete topic one combination rule", () => {
    const kinds = ["job.validate", "job.dependency.after", "job.state.run", "job.event.start",
      "plugin.query", "conf.update", "job.update.attributes.system.duration", "mine"].map(topicKind);
    expectTypeOf(kinds).toEqualTypeOf<import("jobtap/plugin").TopicKind[]>();
    if (kinds.join() !== "validate,validate,reduce,notify,query,validate,validate,custom") {
      throw new Error(`unexpected kinds ${kinds.join()}`);
    }
  });
});
