/**
 * The `[accounting]` table of the instance configuration: the fair-share algorithm, decay,
 * recompute period, the multi-factor weights and the default bank. Every error names the
 * TOML key; weights whose sum could overflow Flux's priority range are refused.
 */
import { parseFSD } from "jobtap/plugin";
import { ConfigError, isTable, type Table } from "../common/config.js";

/** Flux's largest priority (the expedite value). */
export const PRIORITY_MAX = 4294967295;

export interface Weights {
  fairShare: number;
  age: number;
  urgency: number;
  queue: number;
  jobSize: number;
}

export interface AccountingConfig {
  algorithm: "fair-tree" | "classic";
  halfLifeMs: number;
  periodMs: number;
  maxAgeMs: number;
  /** Cores at which the job-size factor reaches 1. */
  jobSizeMax: number;
  gpuFactor: number;
  weights: Weights;
  /** Queue name → queue factor in [0, 1]. */
  queues: Record<string, number>;
  /** Some queue has a factor (else the queue factor is 0 for every job). */
  anyQueue: boolean;
  /** The bank a user with no association is charged to (undefined: such jobs are rejected). */
  defaultBank: string | undefined;
}

/** flux-accounting's weights: fair share 100,000 dominates, then queue, urgency, age. */
export const DEFAULT_WEIGHTS: Weights = { fairShare: 100000, age: 100, urgency: 1000, queue: 10000, jobSize: 0 };
const WEIGHT_NAMES: Record<keyof Weights, string> = {
  fairShare: "fair-share",
  age: "age",
  urgency: "urgency",
  queue: "queue",
  jobSize: "job-size",
};

const DAY = 86400;

function duration(t: Table, key: string, dflt: number): number {
  const v = t[key];
  if (v === undefined) return dflt * 1000;
  if (typeof v !== "string" && typeof v !== "number") throw new ConfigError(`[accounting].${key}: must be a duration ("7d", seconds), got ${JSON.stringify(v)}`);
  let s: number;
  try {
    s = parseFSD(v, `[accounting].${key}`);
  } catch (e) {
    throw new ConfigError((e as Error).message);
  }
  if (!(s > 0)) throw new ConfigError(`[accounting].${key}: must be > 0, got ${JSON.stringify(v)}`);
  return s * 1000;
}

function number(t: Table, key: string, dflt: number, where = "[accounting]"): number {
  const v = t[key];
  if (v === undefined) return dflt;
  if (typeof v !== "number" || !Number.isFinite(v) || v < 0) throw new ConfigError(`${where}.${key}: must be a number >= 0, got ${JSON.stringify(v)}`);
  return v;
}

function readWeights(raw: unknown): Weights {
  if (raw === undefined) return { ...DEFAULT_WEIGHTS };
  if (!isTable(raw)) throw new ConfigError("[accounting.weights]: must be a table");
  const known = Object.values(WEIGHT_NAMES);
  for (const k of Object.keys(raw)) if (!known.includes(k)) throw new ConfigError(`[accounting.weights].${k}: unknown weight (known: ${known.join(", ")})`);
  const w = { ...DEFAULT_WEIGHTS };
  for (const [key, name] of Object.entries(WEIGHT_NAMES) as [keyof Weights, string][]) {
    w[key] = number(raw, name, DEFAULT_WEIGHTS[key], "[accounting.weights]");
    if (!Number.isSafeInteger(w[key])) throw new ConfigError(`[accounting.weights].${name}: must be an integer, got ${w[key]}`);
  }
  const sum = Object.values(w).reduce((a, b) => a + b, 0);
  if (sum > PRIORITY_MAX) throw new ConfigError(`[accounting.weights]: the weights sum to ${sum}, over the priority range (max ${PRIORITY_MAX})`);
  return w;
}

function readQueues(raw: unknown): Record<string, number> {
  if (raw === undefined) return {};
  if (!isTable(raw)) throw new ConfigError("[accounting.queues]: must be a table of queue = factor");
  const out: Record<string, number> = {};
  for (const [q, v] of Object.entries(raw)) {
    if (typeof v !== "number" || !(v >= 0 && v <= 1)) throw new ConfigError(`[accounting.queues].${q}: must be a factor from 0 to 1, got ${JSON.stringify(v)}`);
    out[q] = v;
  }
  return out;
}

/** Reads `[accounting]` (all optional); throws ConfigError naming the key. */
export function readAccountingConfig(conf: Table): AccountingConfig {
  const raw = conf.accounting ?? {};
  if (!isTable(raw)) throw new ConfigError("[accounting]: must be a table");
  const known = ["fair-share", "decay-half-life", "recompute-period", "max-age", "job-size-max", "gpu-factor", "weights", "queues", "default-bank"];
  for (const k of Object.keys(raw)) if (!known.includes(k)) throw new ConfigError(`[accounting].${k}: unknown key (known: ${known.join(", ")})`);
  const algorithm = raw["fair-share"] ?? "fair-tree";
  if (algorithm !== "fair-tree" && algorithm !== "classic") throw new ConfigError(`[accounting].fair-share: must be "fair-tree" or "classic", got ${JSON.stringify(algorithm)}`);
  const defaultBank = raw["default-bank"];
  if (defaultBank !== undefined && typeof defaultBank !== "string") throw new ConfigError(`[accounting].default-bank: must be a bank name, got ${JSON.stringify(defaultBank)}`);
  const jobSizeMax = number(raw, "job-size-max", 64);
  if (jobSizeMax === 0) throw new ConfigError("[accounting].job-size-max: must be > 0");
  return {
    algorithm,
    halfLifeMs: duration(raw, "decay-half-life", 7 * DAY),
    periodMs: duration(raw, "recompute-period", 300),
    maxAgeMs: duration(raw, "max-age", 7 * DAY),
    jobSizeMax,
    gpuFactor: number(raw, "gpu-factor", 1),
    weights: readWeights(raw.weights),
    queues: readQueues(raw.queues),
    anyQueue: Object.keys(readQueues(raw.queues)).length > 0,
    defaultBank,
  };
}
