/** docs/plugins.md's last section, as a test: the minimal fair-share plugin under createTestHost. */
import { fileURLToPath } from "node:url";
import { afterEach, expect, it } from "vitest";
import { createTestHost, type TestHost } from "jobtap/plugin";

let t: TestHost;
afterEach(() => t?.close());

it("runs the user with less decayed usage first", async () => {
  t = await createTestHost({
    plugin: fileURLToPath(new URL("../accounting/mini-fairshare.ts", import.meta.url)),
    conf: { halfLifeDays: 1, shares: { "1001": 1, "1002": 1 } },
    resources: { cores: 1 },
  });
  const first = await t.submit({ userid: 1001, runDuration: 3600 });
  await t.advance(3600_000);
  await t.runToCompletion(first);
  const blocker = await t.submit({ userid: 1003, runDuration: 10 });
  const heavy = await t.submit({ userid: 1001, runDuration: 10, urgency: 16 });
  const light = await t.submit({ userid: 1002, runDuration: 10, urgency: 1 });
  expect(t.job(light).priority).toBeGreaterThan(t.job(heavy).priority);
  await t.runToCompletion(blocker);
  await t.runToCompletion(heavy);
  const start = (id: typeof heavy) => t.eventlog(id).find((e) => e.name === "start")!.timestamp;
  expect(start(light)).toBeLessThan(start(heavy));
  const q = (await t.plugins.query("mini-fairshare.ts")) as { usage: Record<string, { seconds: number }> };
  expect(q.usage["1001"]!.seconds).toBeGreaterThan(3599);
});
