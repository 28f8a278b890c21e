/**
 * The HTCondor configuration table: case-insensitive knob names, raw values with their
 * source line, and expansion of `$(...)` at lookup time (the last definition wins, and an
 * empty value means "not set"). Reading files lives in config-reader.ts.
 */
import { ErrorCode, JobtapError } from "../errors.js";
import { DEFAULT_CONDOR_VERSION } from "./conditions.js";
import { builtinEvaluator } from "./classad-bridge.js";
import { evaluateMacroText } from "./macro-functions.js";
import { expandMacros, type MacroScope, type RawMacro } from "./macros.js";

/** Where a value came from: a file (or a label such as a TOML path) and a 1-based line. */
export interface ConfigSource {
  file: string;
  line: number;
}

/** One knob as defined: its spelling, raw text (self-references already expanded), source. */
export interface ConfigEntry {
  name: string;
  value: string;
  source: ConfigSource;
  /** For `@=` values: the source line of each line of `value`. */
  lines?: number[];
}

/** Settings that shape lookups. */
export interface CondorConfigOptions {
  /** Environment for `$ENV()`; default: none (pass process.env explicitly). */
  env?: Record<string, string | undefined>;
  /** Built-in values consulted after the table (HTCondor's param defaults). */
  defaults?: Record<string, string>;
  /** Subsystem (e.g. `JOB_ROUTER`): `SUBSYS.NAME` is preferred over `NAME`. */
  subsys?: string;
  /** Local name: `SUBSYS.LOCAL.NAME` and `LOCAL.NAME` are preferred over both. */
  localName?: string;
  /** HTCondor version used by `if version ...` (default 25.0.0). */
  version?: string;
  /** Source of `$RANDOM_CHOICE`/`$RANDOM_INTEGER` numbers in [0,1) (default Math.random). */
  random?: () => number;
}

/** Formats a source as `file:line` (just `file` for line 0: a label such as a TOML path). */
export function formatSource(source: ConfigSource): string {
  return source.line > 0 ? `${source.file}:${source.line}` : source.file;
}

/** A parsed HTCondor configuration; one instance per file set, no shared state. */
export class CondorConfig {
  private readonly entries = new Map<string, ConfigEntry>();
  private readonly defaults = new Map<string, string>();
  /** Non-fatal notes from reading (`warning :` lines, skipped `use` lines). */
  readonly warnings: string[] = [];
  readonly env: Record<string, string | undefined>;
  readonly version: string;

  constructor(private readonly options: CondorConfigOptions = {}) {
    this.env = options.env ?? {};
    this.version = options.version ?? DEFAULT_CONDOR_VERSION;
    for (const [k, v] of Object.entries(options.defaults ?? {})) this.defaults.set(k.toLowerCase(), v);
  }

  /** Defines (or redefines) a knob; called by the reader in file order. */
  define(entry: ConfigEntry): void {
    const key = entry.name.toLowerCase();
    this.entries.delete(key); // keep names() in order of last definition
    this.entries.set(key, entry);
  }

  /** The entry a lookup of `name` resolves to, honouring LOCAL./SUBSYS. prefixes. */
  entry(name: string): ConfigEntry | undefined {
    for (const key of this.candidateKeys(name)) {
      const found = this.entries.get(key);
      if (found !== undefined) return found;
    }
    return undefined;
  }

  private candidateKeys(name: string): string[] {
    const key = name.toLowerCase();
    const { subsys, localName } = this.options;
    const keys: string[] = [];
    if (subsys && localName) keys.push(`${subsys}.${localName}.${key}`.toLowerCase());
    if (localName) keys.push(`${localName}.${key}`.toLowerCase());
    if (subsys) keys.push(`${subsys}.${key}`.toLowerCase());
    keys.push(key);
    return keys;
  }

  /** The raw text of `name` (table, then built-in defaults), unexpanded; empty counts as unset. */
  raw(name: string): RawMacro | undefined {
    const entry = this.entry(name);
    if (entry !== undefined) {
      return entry.value === "" ? undefined : { value: entry.value, where: formatSource(entry.source) };
    }
    const fallback = this.defaults.get(name.toLowerCase());
    return fallback === undefined || fallback === "" ? undefined : { value: fallback };
  }

  /** True when `name` is set to a non-empty value. */
  has(name: string): boolean {
    return this.get(name) !== undefined;
  }

  /** The expanded value of `name`; undefined when unset or when it expands to nothing. */
  get(name: string): string | undefined {
    const raw = this.raw(name);
    if (raw === undefined) return undefined;
    const value = this.expand(raw.value, raw.where ?? name, name).trim();
    return value === "" ? undefined : value;
  }

  /** Where `name` was defined, if it was. */
  source(name: string): ConfigSource | undefined {
    return this.entry(name)?.source;
  }

  /** Every defined knob in order of last definition (spelled as last written). */
  names(): string[] {
    return [...this.entries.values()].map((e) => e.name);
  }

  /** Expands `$(...)` in `text` against this table; `where` labels errors. */
  expand(text: string, where = "config", self?: string): string {
    // Expanding knob `self`: a reference back to it is recursion, so seed the stack with it.
    return expandMacros(text, this.macroScope(where), self === undefined ? [] : [self]);
  }

  /** A macro scope over this table, for callers (transforms) that layer their own on top. */
  macroScope(where: string): MacroScope {
    return {
      lookup: (name) => this.raw(name),
      env: this.env,
      ...(this.options.random ? { random: this.options.random } : {}),
      // $INT/$REAL/$STRING/$EVAL evaluate their argument in an empty ad, as HTCondor's
      // config code does.
      evaluate: (text) => evaluateMacroText(text, builtinEvaluator(), null),
      code: ErrorCode.CONDOR_CONFIG,
      where,
    };
  }

  /** A boolean knob: true/false/yes/no/t/f/1/0; anything else is an error naming the knob. */
  getBool(name: string, fallback: boolean): boolean {
    const value = this.get(name);
    if (value === undefined) return fallback;
    if (/^(true|yes|t|1)$/i.test(value)) return true;
    if (/^(false|no|f|0)$/i.test(value)) return false;
    throw this.badValue(name, value, "a boolean");
  }

  /** A numeric knob; `integer` requires a whole number. */
  getNumber(name: string, fallback: number, integer = false): number {
    const value = this.get(name);
    if (value === undefined) return fallback;
    const n = Number(value);
    if (value.trim() === "" || !Number.isFinite(n) || (integer && !Number.isInteger(n))) {
      throw this.badValue(name, value, integer ? "an integer" : "a number");
    }
    return n;
  }

  /** A list knob: items separated by commas and/or whitespace. */
  getList(name: string): string[] {
    return (this.get(name) ?? "").split(/[\s,]+/).filter((s) => s !== "");
  }

  private badValue(name: string, value: string, what: string): JobtapError {
    const src = this.source(name);
    const where = src ? `${formatSource(src)}: ` : "";
    return new JobtapError(ErrorCode.CONDOR_CONFIG, `${where}${name} = ${value} is not ${what}`);
  }
}
