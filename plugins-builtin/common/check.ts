/**
 * The builtins' configuration checks, run without loading anything: `jobtap config check`
 * and the daemon's start call this so that a bad `[policy.limits]`, `[queues]` or
 * `[resource]` section is reported with the daemon settings' problems, all at once, instead
 * of the daemon accepting the file and then failing at the first builtin's `conf.update`.
 *
 * Each reader is the one the plugin's `conf.update` uses, so the messages are the same.
 * Each stops at its own first problem; running every reader still shows one problem per
 * section. perilog is checked only when the config's plugin list loads it, as the daemon
 * reads its tables only then.
 */
import { readSlurmConfig } from "../exec-slurm/config.js";
import { readDurationLimits } from "../limit-duration/index.js";
import { readJobSizeLimits } from "../limit-job-size/index.js";
import { readPerilogConfig } from "../perilog/config.js";
import { readQueueConfig } from "../update-queue/index.js";
import { readExpiration } from "../validate-duration/index.js";
import { isTable, type Table } from "./config.js";

type Reader = (conf: Table) => unknown;

/** The limit readers, run on each of limitViews(conf). */
const LIMIT_READERS: readonly Reader[] = [readJobSizeLimits, readDurationLimits];

/** The other readers, run on the whole config. */
const WHOLE_READERS: readonly Reader[] = [
  (conf) => {
    const e = readExpiration(conf);
    if (typeof e === "string") throw new Error(e);
  },
  readQueueConfig,
  readSlurmConfig,
];

/** Every problem the builtins (and a listed perilog) would refuse this config for. */
export function checkBuiltinConfig(conf: Table): string[] {
  const problems: string[] = [];
  const run = (read: Reader, view: Table) => {
    try {
      read(view);
    } catch (e) {
      const message = (e as Error).message;
      // Both limit readers walk the same [queues.*.policy] tables.
      if (!problems.includes(message)) problems.push(message);
    }
  };
  for (const read of LIMIT_READERS) for (const view of limitViews(conf)) run(read, view);
  for (const read of WHOLE_READERS) run(read, conf);
  if (loadsPerilog(conf)) run(readPerilogConfig, conf);
  return problems;
}

/**
 * The config as a whole, then the general limits alone and each queue alone, so a bad
 * queue does not hide a bad general limit (the readers stop at their first problem).
 */
function limitViews(conf: Table): Table[] {
  const queues = isTable(conf.queues) ? Object.entries(conf.queues) : [];
  if (queues.length === 0) return [conf];
  const { queues: _all, ...general } = conf;
  return [conf, general, ...queues.map(([name, q]) => ({ queues: { [name]: q } }))];
}

function loadsPerilog(conf: Table): boolean {
  const jm = conf["job-manager"];
  const plugins = isTable(jm) ? jm.plugins : undefined;
  return Array.isArray(plugins) && plugins.some((d) => isTable(d) && d.load === "perilog");
}
