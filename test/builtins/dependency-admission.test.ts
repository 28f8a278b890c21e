/**
 * .dependency-after while the dependent is still being admitted: a plugin whose `job.new`
 * answers later keeps the dependent in NEW with its `validate` not yet queued, and a fatal
 * exception is refused there. An antecedent failing in that window must still end the
 * dependent once it is admitted (it was left in DEPEND for ever).
 */
import { afterEach, describe, expect, it } from "vitest";
import { formatJobId, type JobId } from "../../src/manager/base/ids.js";
import { testJobspec } from "../../src/testhost.js";
import type { PluginContext } from "../../src/plugin.js";
import { exceptions, host, until, type TestHost } from "./helpers.js";

let h: TestHost | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** A plugin whose job.new, for jobs named "slow", answers only when `release()` is called. */
function slowAdmission(): { plugin: (p: PluginContext) => void; release: () => void; waiting: () => number } {
  const held: Array<() => void> = [];
  return {
    plugin: (p) =>
      p.on("job.new", (job) => {
        if ((job.jobspec.attributes.system as { job?: { name?: string } } | undefined)?.job?.name !== "slow") return undefined;
        return new Promise<undefined>((resolve) => held.push(() => resolve(undefined)));
      }),
    release: () => {
      for (const r of held.splice(0)) r();
    },
    waiting: () => held.length,
  };
}

describe("a dependency that fails while its dependent is admitted", () => {
  it.each([
    ["afterok", 256, "can never be satisfied"],
    ["afternotok", 0, "can never be satisfied"],
  ])("%s: the antecedent ends (status %i) before the dependent's job.new answers: the dependent ends with a dependency exception", async (scheme, status, why) => {
    const slow = slowAdmission();
    const t = (h = await host({}, { plugin: slow.plugin }));
    const a = await t.submit({ runDuration: 5, waitStatus: status });
    let dependent: JobId | undefined;
    let refused: unknown;
    t.manager.submit(testJobspec({ name: "slow", dependencies: [{ scheme, value: formatJobId(a) }] })).then(
      (id) => (dependent = id),
      (e: unknown) => (refused = e),
    );
    await until(t, () => slow.waiting() === 1, 1000);
    expect(slow.waiting()).toBe(1);
    await until(t, () => t.job(a).state === "INACTIVE", 60_000);
    expect(dependent).toBeUndefined(); // still in admission when its antecedent ended
    slow.release();
    await until(t, () => dependent !== undefined || refused !== undefined, 1000);
    expect(refused).toBeUndefined();
    const id = dependent!;
    await until(t, () => t.job(id).state === "INACTIVE", 10_000);
    expect(t.job(id).state).toBe("INACTIVE");
    expect(exceptions(t, id)).toEqual([`dependency:0:dependency after-${scheme === "afterok" ? "success" : "failure"}=${formatJobId(a)} ${why}`]);
    expect(t.eventlog(id).some((e) => e.name === "alloc")).toBe(false);
  });
});
