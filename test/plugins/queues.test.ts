/** p.setQueueStarted / p.setDefaultQueue through the plugin context, against the real manager. */
import { describe, expect, it } from "vitest";
import { closeAfterEach } from "../closing.js";
import { createTestHost, type PluginContext, type TestHost } from "jobtap/plugin";

let t: TestHost | undefined;
closeAfterEach(() => t);

describe("queue control from a plugin", () => {
  it("a stopped queue holds its jobs in SCHED; the plugin's onRemove may start it again", async () => {
    let ctx: PluginContext | undefined;
    t = await createTestHost({
      plugin: (p: PluginContext) => {
        ctx = p;
        p.setDefaultQueue("batch");
        p.setQueueStarted("batch", false);
        p.onRemove(() => p.setQueueStarted("batch", true));
        p.on("job.state.priority", (job) => ({ priority: job.urgency }));
      },
      name: "queue-keeper",
      builtins: false, // no .update-queue policy: this plugin alone drives the queues
    });
    const named = await t.submit({ system: { queue: "batch" } });
    const unnamed = await t.submit();
    const elsewhere = await t.submit({ system: { queue: "debug" } });
    await t.advance(1000);
    expect([t.job(named).state, t.job(unnamed).state]).toEqual(["SCHED", "SCHED"]);
    expect(t.job(elsewhere).state).toBe("INACTIVE");
    expect(() => ctx!.setQueueStarted(7 as never, true)).toThrow(expect.objectContaining({ code: "INVALID_ARGUMENT" }));

    // Removal runs onRemove (no "removed" check for queue calls), which starts the queue.
    t.plugins.remove("queue-keeper");
    expect((await t.runToCompletion(named)).result).toBe("COMPLETED");
    expect((await t.runToCompletion(unnamed)).result).toBe("COMPLETED");
  });
});
