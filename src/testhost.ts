/**
 * `createTestHost()`: runs a plugin against a real, in-memory job manager on a simulated
 * clock, with the test executor, so plugin authors can unit-test policies without a daemon
 * and without sleeping. Exported from `jobtap/plugin`.
 */
import { SimulatedClock } from "./manager/base/clock.js";
import type { JobId } from "./manager/base/ids.js";
import { createJobManager, type JobManager } from "./manager/manager.js";
import type { EventEntry, Jobspec } from "./manager/port/records.js";
import type { JobInfo } from "./manager/engine/views.js";
import { carveSlots, type SlotType } from "./manager/scheduler/slots.js";
import { slotPolicies } from "./manager/policy/slot-policy.js";
import type { JobtapHost } from "./plugins/host.js";
import { BUILTINS, jobtapPlugins } from "../plugins-builtin/index.js";
import type { PluginDefinition } from "./plugins/loader.js";

/** Options of `createTestHost`. */
export interface TestHostOptions {
  /** The plugin under test: a module path (`.js` or `.ts`) or an inline definition. */
  plugin?: string | PluginDefinition;
  /** List name of an inline plugin (default "test-plugin"). */
  name?: string;
  /** The plugin's own conf (`p.conf`). */
  conf?: Record<string, unknown>;
  /** The instance configuration (`conf.update`). */
  config?: Record<string, unknown>;
  /** Load the builtins first, as a real manager does (default true). */
  builtins?: boolean;
  /** The local resource pool (default: 4 cores, 0 gpus, 16 GiB). */
  resources?: { cores?: number; gpus?: number; memory?: number };
  /** Static slots carved from the pool (`[resources] slots`, docs/ads.md; default: one). */
  slots?: SlotType[];
  /** Async-handler deadline in ms (default 30 s, on the simulated clock). */
  deadlineMs?: number;
  /** The instance owner's uid (manager and `p.owner`; default: this process's uid). */
  owner?: number;
}

/** A job to submit: everything optional. */
export interface TestJob {
  userid?: number;
  urgency?: number;
  /** How long the test executor "runs" it (FSD or seconds; default 0). */
  runDuration?: string | number;
  /** Wait status reported in `finish` (default 0: success). */
  waitStatus?: number;
  /** attributes.system.job.name */
  name?: string;
  cores?: number;
  /** attributes.system.dependencies */
  dependencies?: Array<{ scheme: string; value?: unknown; [k: string]: unknown }>;
  /** Extra attributes.system keys (duration, queue, slot, ...). */
  system?: Record<string, unknown>;
  /** User attributes of the job ad: name → ClassAd expression text (`attributes.user.classad`). */
  classad?: Record<string, string>;
}

/** A running test host. */
export interface TestHost {
  readonly manager: JobManager;
  readonly plugins: JobtapHost;
  readonly clock: SimulatedClock;
  /** Every message the host and the manager logged, as "level: message". */
  readonly log: string[];
  /** Submits a job and returns its id once accepted (rejections reject the Promise). */
  submit(job?: TestJob): Promise<JobId>;
  /** Moves simulated time forward, running every timer that falls due. */
  advance(ms: number): Promise<void>;
  /** Advances time until the job is INACTIVE (or `maxMs` passes) and returns its info. */
  runToCompletion(id: JobId, maxMs?: number): Promise<JobInfo>;
  job(id: JobId): JobInfo;
  eventlog(id: JobId): EventEntry[];
  /** Names of the job's events, in order: the quickest thing to assert on. */
  events(id: JobId): string[];
  close(): Promise<void>;
}

/** Builds a Flux jobspec v1 for the test executor. */
export function testJobspec(job: TestJob = {}): Jobspec {
  const system: Record<string, unknown> = {
    exec: { test: { run_duration: job.runDuration ?? 0, wait_status: job.waitStatus ?? 0 } },
    ...job.system,
  };
  if (job.name !== undefined) system.job = { name: job.name };
  if (job.dependencies !== undefined) system.dependencies = job.dependencies;
  return {
    version: 1,
    resources: [{ type: "slot", count: 1, label: "task", with: [{ type: "core", count: job.cores ?? 1 }] }],
    tasks: [{ command: ["true"], slot: "task", count: { per_slot: 1 } }],
    attributes: job.classad === undefined ? { system } : { system, user: { classad: job.classad } },
  };
}

/** Creates a test host with the plugin under test loaded after the builtins. */
export async function createTestHost(opts: TestHostOptions = {}): Promise<TestHost> {
  const clock = new SimulatedClock();
  const log: string[] = [];
  const factory = jobtapPlugins({
    config: opts.config ?? {},
    builtins: opts.builtins === false ? [] : BUILTINS,
    pluginPath: [],
    log: (level, message) => void log.push(`${level}: ${message}`),
    clock,
    ...(opts.deadlineMs !== undefined ? { deadlineMs: opts.deadlineMs } : {}),
    ...(opts.owner !== undefined ? { owner: opts.owner } : {}),
  });
  let host: JobtapHost | undefined;
  const resources = { cores: 4, gpus: 0, memory: 16 * 2 ** 30, ...opts.resources };
  // `[policy]` and `[resources] slots` policy keys in the instance config, read as the daemon does.
  const config = opts.config ?? {};
  const slotPolicy = slotPolicies(carveSlots(resources, opts.slots), config.policy as Record<string, unknown> | undefined, (opts.slots ?? []) as never[]);
  const manager = await createJobManager({
    clock,
    slotPolicy,
    ...(opts.owner !== undefined ? { owner: opts.owner } : {}),
    store: "memory",
    config: opts.config ?? {},
    resources,
    ...(opts.slots !== undefined ? { slots: opts.slots } : {}),
    log: (level, message) => void log.push(`${level}: ${message}`),
    plugins: async (mgr) => (host = await factory(mgr)),
  });
  const plugins = host!;
  if (typeof opts.plugin === "string") await plugins.load(opts.plugin, opts.conf ?? {});
  else if (opts.plugin !== undefined) {
    await plugins.loadDefinition(opts.name ?? "test-plugin", opts.plugin, opts.conf ?? {});
  }
  return testHostApi(manager, plugins, clock, log);
}

function testHostApi(
  manager: JobManager,
  plugins: JobtapHost,
  clock: SimulatedClock,
  log: string[],
): TestHost {
  /** Advances time in batch-window steps until `p` settles (submits wait for a commit). */
  const settle = async <T>(p: Promise<T>): Promise<T> => {
    let done = false;
    p.then(() => (done = true), () => (done = true));
    for (let i = 0; i < 1000 && !done; i++) await clock.advance(10);
    return p;
  };
  return {
    manager,
    plugins,
    clock,
    log,
    submit: (job = {}) =>
      settle(
        manager.submit(testJobspec(job), {
          ...(job.userid !== undefined ? { userid: job.userid } : {}),
          ...(job.urgency !== undefined ? { urgency: job.urgency } : {}),
        }),
      ),
    advance: (ms) => clock.advance(ms),
    async runToCompletion(id, maxMs = 24 * 3600_000) {
      const end = clock.now() + maxMs;
      while (manager.job(id).state !== "INACTIVE" && clock.now() < end) await clock.advance(10);
      return manager.job(id);
    },
    job: (id) => manager.job(id),
    eventlog: (id) => manager.eventlog(id),
    events: (id) => manager.eventlog(id).map((e) => e.name),
    close: () => manager.close(),
  };
}
