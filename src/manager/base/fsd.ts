/**
 * Flux Standard Duration (RFC 23): a non-negative number with an optional unit suffix
 * `s` (seconds, the default), `m` (minutes), `h` (hours) or `d` (days); also "inf"/"infinity".
 * Used for `attributes.system.duration`, the test executor's `run_duration`, plugin limits
 * and CLI options.
 */
import { ErrorCode, JobtapError } from "../../errors.js";

const UNIT_SECONDS: Record<string, number> = { "": 1, s: 1, ms: 0.001, m: 60, h: 3600, d: 86400 };

/**
 * Parses an FSD string (or a number of seconds) into seconds. Throws INVALID_ARGUMENT
 * naming the value (and `where`, when given) if it is not a valid duration.
 */
export function parseFSD(value: string | number, where = "duration"): number {
  if (typeof value === "number") {
    if (!(value >= 0)) throw bad(String(value), where);
    return value;
  }
  const s = value.trim().toLowerCase();
  if (s === "inf" || s === "infinity") return Infinity;
  const m = /^([0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?)(ms|s|m|h|d)?$/.exec(s);
  if (!m) throw bad(value, where);
  const n = Number(m[1]) * (UNIT_SECONDS[m[2] ?? ""] ?? 1);
  if (!Number.isFinite(n) || n < 0) throw bad(value, where);
  return n;
}

/** Formats seconds as a short FSD (`90s` → "1.5m"), as Flux's CLI prints durations. */
export function formatFSD(seconds: number): string {
  if (seconds === Infinity) return "inf";
  const trim = (n: number) => String(Number(n.toFixed(3)));
  if (seconds < 60) return `${trim(seconds)}s`;
  if (seconds < 3600) return `${trim(seconds / 60)}m`;
  if (seconds < 86400) return `${trim(seconds / 3600)}h`;
  return `${trim(seconds / 86400)}d`;
}

function bad(value: string, where: string): JobtapError {
  return new JobtapError(
    ErrorCode.INVALID_ARGUMENT,
    `${where}: invalid Flux Standard Duration "${value}" (expected N[s|m|h|d] or inf)`,
  );
}
