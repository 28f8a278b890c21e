/**
 * Building a Flux jobspec v1 from `submit` options, as `flux submit` does: one slot per
 * task labelled "task", cores and gpus per slot, the command as the single task, and the
 * system attributes (duration, cwd, environment, job name, queue, dependencies, shell
 * output options). `--cc` makes copies with `{cc}` substituted.
 */
import { parseFSD } from "../manager/base/fsd.js";
import type { Jobspec } from "../manager/port/records.js";
import { usage } from "./args.js";
import { URGENCY_DEFAULT, URGENCY_EXPEDITE, URGENCY_HOLD, URGENCY_MAX, URGENCY_MIN } from "../manager/base/states.js";

export interface SubmitSpec {
  command: string[];
  ntasks: number;
  coresPerTask: number;
  gpusPerTask: number;
  /** Seconds; 0 means no limit. */
  duration: number;
  jobName?: string | undefined;
  queue?: string | undefined;
  cwd: string;
  /** The submitter's umask: a job run as another user than the daemon's starts with it. */
  umask?: number | undefined;
  environment: Record<string, string>;
  output?: string | undefined;
  error?: string | undefined;
  dependencies: Dependency[];
  /** `--setattr K=V` pairs, in order. */
  setattr: [string, unknown][];
}

export interface Dependency {
  scheme: string;
  value: string;
  [k: string]: unknown;
}

/** The jobspec for one submission (no `{cc}` substitution). */
export function buildJobspec(spec: SubmitSpec): Jobspec {
  const slotWith: Record<string, unknown>[] = [{ type: "core", count: spec.coresPerTask }];
  if (spec.gpusPerTask > 0) slotWith.push({ type: "gpu", count: spec.gpusPerTask });
  const system: Record<string, unknown> = {
    duration: spec.duration,
    cwd: spec.cwd,
    environment: spec.environment,
  };
  if (spec.umask !== undefined) system.umask = spec.umask;
  if (spec.jobName !== undefined) system.job = { name: spec.jobName };
  if (spec.queue !== undefined) system.queue = spec.queue;
  if (spec.dependencies.length > 0) system.dependencies = spec.dependencies;
  const output = shellOutput(spec);
  if (output) system.shell = { options: { output } };
  const jobspec: Jobspec = {
    version: 1,
    resources: [{ type: "slot", count: spec.ntasks, label: "task", with: slotWith }],
    tasks: [{ command: spec.command, slot: "task", count: { per_slot: 1 } }],
    attributes: { system },
  };
  for (const [key, value] of spec.setattr) setAttribute(jobspec, key, value);
  return jobspec;
}

function shellOutput(spec: SubmitSpec): Record<string, unknown> | undefined {
  if (spec.output === undefined && spec.error === undefined) return undefined;
  const out: Record<string, unknown> = {};
  if (spec.output !== undefined) out.stdout = { type: "file", path: spec.output };
  if (spec.error !== undefined) out.stderr = { type: "file", path: spec.error };
  return out;
}

/**
 * `--setattr KEY=VAL`: a key with no `system.`/`user.` prefix goes under `system.` (as in
 * Flux); a leading `.` addresses `attributes` itself. VAL is JSON if it parses, else a string.
 */
export function parseSetattr(arg: string): [string, unknown] {
  const eq = arg.indexOf("=");
  const key = eq >= 0 ? arg.slice(0, eq) : arg;
  if (key === "" || key === ".") throw usage(`--setattr "${arg}": missing attribute name`);
  const value = eq >= 0 ? jsonOrString(arg.slice(eq + 1)) : 1;
  if (key.startsWith(".")) return [key.slice(1), value];
  if (key.startsWith("system.") || key.startsWith("user.")) return [key, value];
  return [`system.${key}`, value];
}

/** Sets `attributes.<path>` (dotted), creating intermediate tables. */
export function setAttribute(jobspec: Jobspec, path: string, value: unknown): void {
  const keys = path.split(".");
  let node: Record<string, unknown> = jobspec.attributes;
  for (const k of keys.slice(0, -1)) {
    const next = node[k];
    if (typeof next !== "object" || next === null || Array.isArray(next)) node[k] = {};
    node = node[k] as Record<string, unknown>;
  }
  node[keys[keys.length - 1] as string] = value;
}

/** A JSON value if `text` parses as one, else the text itself. */
export function jsonOrString(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** `--dependency=scheme:value?k=v&k2=v2` (RFC 26 URI form); a bare `scheme` has value "". */
export function parseDependency(uri: string): Dependency {
  // "SCHEME:VALUE[?query]", or a bare "SCHEME[?query]" (value "") as `--dependency=singleton`.
  const q = uri.indexOf("?");
  const head = q >= 0 ? uri.slice(0, q) : uri;
  const colon = head.indexOf(":");
  const scheme = colon >= 0 ? head.slice(0, colon) : head;
  if (!/^[A-Za-z][\w.+-]*$/.test(scheme)) throw usage(`--dependency "${uri}": expected SCHEME:VALUE or SCHEME`);
  const dep: Dependency = { scheme, value: colon >= 0 ? head.slice(colon + 1) : "" };
  if (q >= 0) {
    for (const pair of uri.slice(q + 1).split("&")) {
      if (pair === "") continue;
      const eq = pair.indexOf("=");
      if (eq <= 0) throw usage(`--dependency "${uri}": "${pair}" is not KEY=VALUE`);
      const key = decodeURIComponent(pair.slice(0, eq));
      if (key === "scheme" || key === "value") throw usage(`--dependency "${uri}": "${key}" is reserved`);
      dep[key] = jsonOrString(decodeURIComponent(pair.slice(eq + 1)));
    }
  }
  return dep;
}

/** `-t`: as in `flux submit`, a unitless number means minutes; otherwise an FSD ("inf": none). */
export function parseTimeLimit(text: string): number {
  const seconds = /^[\d.]+$/.test(text.trim()) ? parseFSD(text, "-t") * 60 : parseFSD(text, "-t");
  return seconds === Infinity ? 0 : seconds;
}

/**
 * `--begin-time=T`: `+FSD` from now, "now", a Unix timestamp, or a date Date.parse accepts.
 * Becomes a `begin-time` dependency whose value is the timestamp with three decimals.
 */
export function beginTimeDependency(text: string, nowSeconds: number): Dependency {
  let t: number;
  if (text === "now") t = nowSeconds;
  else if (text.startsWith("+")) t = nowSeconds + parseFSD(text.slice(1), "--begin-time");
  else if (/^\d+(\.\d+)?$/.test(text)) t = Number(text);
  else {
    const ms = Date.parse(text);
    if (Number.isNaN(ms)) throw usage(`--begin-time: "${text}" is not +DURATION, a timestamp or a date`);
    t = ms / 1000;
  }
  return { scheme: "begin-time", value: t.toFixed(3) };
}

/** Replaces `{cc}` in the command, job name and output paths of a copy of `jobspec`. */
export function substituteCc(jobspec: Jobspec, cc: number): Jobspec {
  const text = JSON.stringify(jobspec);
  if (!text.includes("{cc}")) return jobspec;
  return JSON.parse(text.replaceAll("{cc}", String(cc))) as Jobspec;
}

/**
 * `--env` rules applied in order to a copy of the submitter's environment: `-GLOB` removes
 * matching names, `NAME=VALUE` sets (with `$NAME`/`${NAME}` expanded), `NAME` re-imports.
 */
export function applyEnvRules(base: NodeJS.ProcessEnv, rules: string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(base)) if (v !== undefined) env[k] = v;
  for (const rule of rules) {
    if (rule.startsWith("-")) {
      const re = globToRegExp(rule.slice(1));
      for (const k of Object.keys(env)) if (re.test(k)) delete env[k];
      continue;
    }
    const eq = rule.indexOf("=");
    if (eq < 0) {
      const v = base[rule];
      if (v !== undefined) env[rule] = v;
      continue;
    }
    if (eq === 0) throw usage(`--env "${rule}": missing variable name`);
    env[rule.slice(0, eq)] = expandVars(rule.slice(eq + 1), env);
  }
  return env;
}

function expandVars(text: string, env: Record<string, string>): string {
  return text.replace(/\$\{(\w+)\}|\$(\w+)/g, (_, a: string | undefined, b: string | undefined) => {
    return env[(a ?? b) as string] ?? "";
  });
}

function globToRegExp(glob: string): RegExp {
  const body = glob.replace(/[.+^${}()|\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".");
  return new RegExp(`^${body}$`);
}

const NAMED_URGENCY: Record<string, number> = {
  hold: URGENCY_HOLD,
  expedite: URGENCY_EXPEDITE,
  default: URGENCY_DEFAULT,
};

/** Parses an urgency argument (`jobtap urgency`, `submit --urgency`): 0..31 or one of the names. */
export function parseUrgency(text: string, what = "urgency"): number {
  const named = NAMED_URGENCY[text.toLowerCase()];
  if (named !== undefined) return named;
  if (!/^\d+$/.test(text) || Number(text) < URGENCY_MIN || Number(text) > URGENCY_MAX) {
    throw usage(`${what} "${text}": expected ${URGENCY_MIN}..${URGENCY_MAX}, hold, expedite or default`);
  }
  return Number(text);
}
