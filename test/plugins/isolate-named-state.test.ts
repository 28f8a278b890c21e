/**
 * An isolated plugin file that exports a `name` is listed by that name, and its persistent
 * state is kept under it: the state its first setup writes was kept under the file's name
 * (the worker reported the name only once setup was done), so later reads, and the setup
 * after a restart, did not find it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SimulatedClock } from "../../src/manager/base/clock.js";
import { createJobManager, type JobManager } from "../../src/manager/manager.js";
import type { JobtapHost } from "../../src/plugins/index.js";
import { jobtapPlugins } from "../../plugins-builtin/index.js";
import { fixture } from "./isolate-helpers.js";

let dir: string | undefined;
const open: JobManager[] = [];
afterEach(async () => {
  for (const m of open.splice(0)) await m.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** A manager on the SQLite store in `dir` with the fixture loaded isolated, as a daemon does. */
async function start(statedir: string): Promise<{ m: JobManager; host: JobtapHost }> {
  const config = { "job-manager": { plugins: [{ load: fixture("iso-named-state.js"), isolate: true, "heap-mb": 64 }] } };
  let host: JobtapHost | undefined;
  const factory = jobtapPlugins({ config, pluginPath: [], log: () => undefined });
  const m = await createJobManager({ statedir, clock: new SimulatedClock(), config, resources: { cores: 1 }, log: () => undefined, plugins: async (port) => (host = await factory(port)) });
  open.push(m);
  return { m, host: host! };
}

describe("an isolated plugin that exports its name", () => {
  it("keeps the state its setup writes under that name, across a restart over SQLite", async () => {
    dir = mkdtempSync(join(tmpdir(), "jobtap-iso-named-"));
    const first = await start(dir);
    expect(first.host.list()).toEqual([expect.objectContaining({ name: "named-state", isolated: "running" })]);
    expect(await first.host.query("named-state")).toMatchObject({ starts: 1, stored: 1 });
    await first.m.close();
    open.length = 0;
    const second = await start(dir);
    expect(await second.host.query("named-state")).toMatchObject({ starts: 2, stored: 2 });
    // A second load of the same module is refused by its name, and its setup touched none
    // of the loaded one's state.
    await expect(second.host.load(fixture("iso-named-state.js"), {}, { isolate: { heapMb: 64 } })).rejects.toThrow(/named-state already loaded/);
    expect(await second.host.query("named-state")).toMatchObject({ starts: 2, stored: 2 });
  }, 60_000);
});
