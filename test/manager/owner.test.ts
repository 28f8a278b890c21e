import { describe, expect, it } from "vitest";
import { closeAfterEach } from "../closing.js";
import { SimulatedClock } from "../../src/manager/base/clock.js";
import { createJobManager, type JobManager } from "../../src/manager/manager.js";
import type { JobtapHost } from "../../src/plugins/host.js";
import { jobtapPlugins } from "../../plugins-builtin/index.js";

let mgr: JobManager | undefined;
closeAfterEach(() => mgr);

describe("ManagerPort.owner", () => {
  it("is the manager's owner, so p.owner is right with no owner option on the host", async () => {
    const owner = (process.getuid?.() ?? 0) + 4242;
    let host: JobtapHost | undefined;
    mgr = await createJobManager({
      store: "memory",
      clock: new SimulatedClock(),
      owner,
      plugins: async (port) => (host = await jobtapPlugins({ config: {}, builtins: [], pluginPath: [] })(port)),
    });
    expect(mgr.port.owner).toBe(owner);
    let seen: number | undefined;
    await host!.loadDefinition("who", (p) => {
      seen = p.owner;
    });
    expect(seen).toBe(owner);
  });
});
