/**
 * A small command-line parser: long options (`--name VALUE`, `--name=VALUE`), short options
 * (`-n 4`, `-n4`), flags, repeated options, and `--` as the end of options. An unknown option
 * or a missing value is a USAGE error naming it, so every subcommand fails the same way.
 */
import { ErrorCode, JobtapError } from "../errors.js";

export interface OptionSpec {
  /** Long name without dashes; also the key in the parsed result. */
  name: string;
  short?: string;
  /** Takes a value, shown by `--help` as this placeholder (`N`, `FILE`); a flag otherwise. */
  value?: string;
  /** May be given more than once; values collect in order. */
  repeat?: boolean;
  /** One line for `--help`: what the option does. */
  help: string;
}

/**
 * One command's (or subcommand's) option table with its usage lines: the parser reads the
 * options, `--help` prints all of it (help.ts), so the two cannot drift apart.
 */
export interface CommandSpec {
  /** Usage forms after "jobtap ", one per line. */
  usage: string[];
  /** One line saying what the command does. */
  summary: string;
  options: OptionSpec[];
}

export interface ParsedArgs {
  /** Flags are `true`; valued options are strings, or string arrays when `repeat`. */
  options: Record<string, string | string[] | true>;
  positionals: string[];
}

export interface ParseMode {
  /** Stop at the first positional: the rest is a command line (as `flux submit` does). */
  stopAtPositional?: boolean;
}

/**
 * Parses `argv` against a command's option table; throws USAGE naming the offending option
 * (its details list the options the table knows: tests check `--help` describes them all).
 */
export function parseArgs(argv: string[], command: Pick<CommandSpec, "options">, mode: ParseMode = {}): ParsedArgs {
  const specs = command.options;
  const options: ParsedArgs["options"] = {};
  const positionals: string[] = [];
  let i = 0;
  while (i < argv.length) {
    const arg = argv[i] as string;
    if (arg === "--") {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (!arg.startsWith("-") || arg === "-") {
      if (mode.stopAtPositional) {
        positionals.push(...argv.slice(i));
        break;
      }
      positionals.push(arg);
      i += 1;
      continue;
    }
    i = arg.startsWith("--")
      ? takeLong(argv, i, specs, options)
      : takeShort(argv, i, specs, options);
  }
  return { options, positionals };
}

function takeLong(argv: string[], i: number, specs: OptionSpec[], out: ParsedArgs["options"]): number {
  const arg = argv[i] as string;
  const eq = arg.indexOf("=");
  const name = eq >= 0 ? arg.slice(2, eq) : arg.slice(2);
  const spec = specs.find((s) => s.name === name);
  if (!spec) throw unknownOption(`--${name}`, specs);
  if (!spec.value) {
    if (eq >= 0) throw usage(`option --${name} takes no value`);
    out[spec.name] = true;
    return i + 1;
  }
  if (eq >= 0) {
    store(out, spec, arg.slice(eq + 1));
    return i + 1;
  }
  return storeNext(argv, i, spec, `--${name}`, out);
}

function takeShort(argv: string[], i: number, specs: OptionSpec[], out: ParsedArgs["options"]): number {
  const arg = argv[i] as string;
  // Bundled flags (-ab) are allowed; a valued option ends the bundle and takes the rest.
  for (let k = 1; k < arg.length; k++) {
    const letter = arg[k] as string;
    const spec = specs.find((s) => s.short === letter);
    if (!spec) throw unknownOption(`-${letter}`, specs);
    if (!spec.value) {
      out[spec.name] = true;
      continue;
    }
    const rest = arg.slice(k + 1);
    if (rest !== "") {
      store(out, spec, rest.startsWith("=") ? rest.slice(1) : rest);
      return i + 1;
    }
    return storeNext(argv, i, spec, `-${letter}`, out);
  }
  return i + 1;
}

function storeNext(argv: string[], i: number, spec: OptionSpec, shown: string, out: ParsedArgs["options"]): number {
  const value = argv[i + 1];
  if (value === undefined) throw usage(`option ${shown} needs a value`);
  store(out, spec, value);
  return i + 2;
}

function store(out: ParsedArgs["options"], spec: OptionSpec, value: string): void {
  if (!spec.repeat) {
    out[spec.name] = value;
    return;
  }
  const prev = out[spec.name];
  out[spec.name] = Array.isArray(prev) ? [...prev, value] : [value];
}

function unknownOption(shown: string, specs: OptionSpec[]): JobtapError {
  return new JobtapError(ErrorCode.USAGE, `unknown option ${shown}`, { known: specs.map((s) => s.name) });
}

/** A USAGE error: bad command-line input. */
export function usage(message: string): JobtapError {
  return new JobtapError(ErrorCode.USAGE, message);
}

/** The string value of an option, or undefined. */
export function optString(p: ParsedArgs, name: string): string | undefined {
  const v = p.options[name];
  return typeof v === "string" ? v : undefined;
}

/** The values of a repeated option (empty when absent). */
export function optList(p: ParsedArgs, name: string): string[] {
  const v = p.options[name];
  return Array.isArray(v) ? v : typeof v === "string" ? [v] : [];
}

/** True if a flag was given. */
export function optFlag(p: ParsedArgs, name: string): boolean {
  return p.options[name] === true;
}

/** A non-negative integer option; `what` names it in the error. */
export function optInt(p: ParsedArgs, name: string, fallback?: number): number | undefined {
  const v = optString(p, name);
  if (v === undefined) return fallback;
  if (!/^-?\d+$/.test(v)) throw usage(`--${name}: "${v}" is not an integer`);
  return Number(v);
}

/**
 * Takes every `--NAME VALUE` / `--NAME=VALUE` out of `argv` (a global option given after
 * the subcommand), up to `--`. With `stopAt` (the specs of a command that ends its options
 * at its first positional, like submit) the scan also ends there, so the job's own command
 * line is never touched. Returns the last value and the other arguments.
 */
export function takeGlobalOption(
  argv: string[],
  name: string,
  stopAt?: OptionSpec[],
): { value?: string; rest: string[] } {
  const rest: string[] = [];
  let value: string | undefined;
  let i = 0;
  for (; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === "--") break;
    if (arg === `--${name}`) {
      value = argv[i + 1];
      if (value === undefined) throw usage(`option --${name} needs a value`);
      i += 1;
      continue;
    }
    if (arg.startsWith(`--${name}=`)) {
      value = arg.slice(name.length + 3);
      continue;
    }
    if (stopAt && (!arg.startsWith("-") || arg === "-")) break;
    rest.push(arg);
    if (stopAt && takesNextValue(arg, stopAt) && i + 1 < argv.length) {
      i += 1;
      rest.push(argv[i] as string);
    }
  }
  rest.push(...argv.slice(i));
  return value === undefined ? { rest } : { value, rest };
}

/** True if option word `arg` takes the next word as its value under `specs`. */
function takesNextValue(arg: string, specs: OptionSpec[]): boolean {
  if (arg.startsWith("--")) return !arg.includes("=") && specs.some((s) => s.name === arg.slice(2) && s.value !== undefined);
  for (let k = 1; k < arg.length; k++) {
    const spec = specs.find((s) => s.short === arg[k]);
    if (spec?.value) return k === arg.length - 1;
  }
  return false;
}
