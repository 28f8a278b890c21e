/**
 * `node dist/bench/lib/open-store.js STATEDIR`: opens a copy-free restart of STATEDIR's store
 * with the builtins and prints open time, memory and counts as JSON (for `--cpu-prof` runs
 * of restart, bench/restart.ts's cached stores). It closes the manager without writing jobs
 * (the replay may still write summaries it lacked).
 */
import { createJobManager } from "../../src/manager/manager.js";
import { jobtapPlugins } from "../../plugins-builtin/index.js";

const statedir = process.argv[2]!;
const t0 = performance.now();
const mgr = await createJobManager({ statedir, store: "sqlite", resources: { cores: 100_000 }, inactiveNumLimit: 10_000_000, log: () => undefined, plugins: jobtapPlugins({ config: {} }) });
const openMs = performance.now() - t0;
(globalThis as { gc?: () => void }).gc?.();
const mem = process.memoryUsage();
await mgr.close();
console.log(JSON.stringify({ open_ms: Math.round(openMs), rss_mb: Math.round(mem.rss / 2 ** 20), heap_mb: Math.round(mem.heapUsed / 2 ** 20), external_mb: Math.round(mem.external / 2 ** 20) }));
