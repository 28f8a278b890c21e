/** The docs/plugins.md walkthrough, as a test: a fair-share plugin under createTestHost. */
import { describe, expect, it } from "vitest";
import { closeAfterEach } from "../closing.js";
import { createTestHost, type TestHost } from "jobtap/plugin";
import { fixture } from "./helpers.js";

let t: TestHost | undefined;
closeAfterEach(() => t);

describe("fairshare example plugin", () => {
  it("runs a light user's job before a heavy user's backlog", async () => {
    t = await createTestHost({
      plugin: fixture("fairshare.ts"),
      config: { fairshare: { weight: 1000, penalty: 100 } },
      resources: { cores: 1 },
    });
    const heavy = [];
    for (let i = 0; i < 3; i++) heavy.push(await t.submit({ userid: 1001, runDuration: "10s" }));
    const light = await t.submit({ userid: 1002, runDuration: "10s" });
    for (const id of [...heavy, light]) await t.runToCompletion(id);
    const started = [...heavy, light].sort(
      (a, b) => startTime(t!, a) - startTime(t!, b),
    );
    expect(started).toEqual([heavy[0], light, heavy[1], heavy[2]]);
    expect(await t.plugins.query("fairshare")).toMatchObject({ active: { 1001: 0, 1002: 0 } });
  });

  it("refuses a bad config, keeping the old one", async () => {
    t = await createTestHost({ plugin: fixture("fairshare.ts") });
    await expect(t.plugins.reloadConfig({ fairshare: { penalty: "high" } })).rejects.toMatchObject({
      message: "fairshare.penalty must be a number >= 0",
    });
    expect(await t.plugins.query("fairshare")).toMatchObject({ penalty: 100 });
  });
});

function startTime(t: TestHost, id: bigint): number {
  const start = t.eventlog(id as never).find((e) => e.name === "start");
  if (!start) throw new Error(`job ${id} never started`);
  return start.timestamp;
}
