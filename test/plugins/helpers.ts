/** Shared set-up for host tests: a JobtapHost on a FakeManager, fixture paths, a log sink. */
import { fileURLToPath } from "node:url";
import { JobtapHost } from "../../src/plugins/host.js";
import type { BuiltinEntry } from "../../src/plugins/builtins.js";
import { SHIPPED } from "../../plugins-builtin/index.js";
import { FakeManager } from "./fake-manager.js";

/** Absolute path of a fixture plugin. */
export function fixture(name: string): string {
  return fileURLToPath(new URL(`../fixtures/plugins/${name}`, import.meta.url));
}

/** A host with no builtins (unless given) and jobtap's shipped plugins, attached to a fresh FakeManager. */
export function makeHost(opts: { builtins?: BuiltinEntry[]; deadlineMs?: number } = {}) {
  const mgr = new FakeManager();
  const logged: string[] = [];
  const host = new JobtapHost({
    clock: mgr.clock,
    builtins: opts.builtins ?? [],
    shipped: SHIPPED,
    log: (level, message) => void logged.push(`${level}: ${message}`),
    ...(opts.deadlineMs !== undefined ? { deadlineMs: opts.deadlineMs } : {}),
  });
  host.attach(mgr);
  mgr.host = host;
  return { host, mgr, logged };
}
