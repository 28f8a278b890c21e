/**
 * Reads HTCondor configuration text into a CondorConfig, line by line as HTCondor does:
 * each line is applied before the next is read, so `if` conditions and `include` paths see
 * the definitions above them, and `A = $(A) more` appends to the value defined so far.
 */
import { readFileSync } from "node:fs";
import { dirname, isAbsolute, resolve } from "node:path";
import { ErrorCode, isJobtapError, JobtapError } from "../errors.js";
import { evaluateCondition, IfStack } from "./conditions.js";
import { CondorConfig, type CondorConfigOptions, type ConfigEntry } from "./config.js";
import { readLogicalLines, type LogicalLine } from "./lines.js";
import { MACRO_EXPANSION_LIMIT } from "./macros.js";

/** How to read configuration text. */
export interface ConfigReadOptions extends CondorConfigOptions {
  /** Name used in messages and sources (default `<config>`). */
  file?: string;
  /** Reads an included file (default: fs.readFileSync as UTF-8). */
  readFile?: (path: string) => string;
  /** Maximum include nesting (default 20). */
  includeDepthLimit?: number;
  /** Add to this table instead of a new one (later files override earlier ones). */
  into?: CondorConfig;
}

/** HTCondor's include nesting limit. */
export const INCLUDE_DEPTH_LIMIT = 20;

const ASSIGNMENT = /^([A-Za-z_][A-Za-z0-9_.]*)\s*(@=|\+[,;|&*]{0,2}=|=|:)\s*(.*)$/s;
const DIRECTIVE = /^(include|use|error|warning)\b\s*([A-Za-z_ ]*?)\s*:\s*(.*)$/is;

/** Reads configuration `text`; throws CONDOR_CONFIG errors naming file and line. */
export function parseCondorConfig(text: string, options: ConfigReadOptions = {}): CondorConfig {
  const config = options.into ?? new CondorConfig(options);
  new FileReader(config, options, options.file ?? "<config>", 0).read(text);
  return config;
}

/** Reads the configuration file at `path` (and what it includes). */
export function readCondorConfigFile(path: string, options: ConfigReadOptions = {}): CondorConfig {
  const readFile = options.readFile ?? ((p: string) => readFileSync(p, "utf8"));
  let text: string;
  try {
    text = readFile(path);
  } catch (e) {
    throw new JobtapError(ErrorCode.CONDOR_CONFIG, `${path}: cannot read: ${(e as Error).message}`);
  }
  return parseCondorConfig(text, { ...options, file: path });
}

/** Reads one file; includes create nested readers sharing the same table. */
class FileReader {
  private readonly ifs = new IfStack();
  private lines: LogicalLine[] = [];
  private next = 0;

  constructor(
    private readonly config: CondorConfig,
    private readonly options: ConfigReadOptions,
    private readonly file: string,
    private readonly depth: number,
  ) {}

  read(text: string): void {
    this.lines = readLogicalLines(text);
    while (this.next < this.lines.length) {
      const line = this.lines[this.next++]!;
      if (line.text === "" || line.text.startsWith("#")) continue;
      try {
        this.apply(line);
      } catch (e) {
        throw this.located(e, line.line);
      }
    }
    try {
      this.ifs.finish();
    } catch (e) {
      throw this.located(e, (e as { line?: number }).line ?? this.lines.length);
    }
  }

  /** Wraps a plain Error as a CONDOR_CONFIG error at `file:line`; coded errors pass through. */
  private located(e: unknown, line: number): JobtapError {
    if (isJobtapError(e)) return e as JobtapError;
    return new JobtapError(ErrorCode.CONDOR_CONFIG, `${this.file}:${line}: ${(e as Error).message}`, {
      file: this.file,
      line,
    });
  }

  private where(line: number): string {
    return `${this.file}:${line}`;
  }

  private apply(line: LogicalLine): void {
    const where = this.where(line.line);
    const isIf = this.ifs.handle(line.text, line.line, (cond) =>
      evaluateCondition(cond, {
        expand: (t) => this.config.expand(t, where),
        isDefined: (name) => this.config.has(name),
        version: this.config.version,
      }),
    );
    if (isIf) return;
    const directive = DIRECTIVE.exec(line.text);
    if (directive && this.ifs.active) return this.directive(directive, line);
    if (directive) return;
    const assignment = ASSIGNMENT.exec(line.text);
    if (assignment) return this.assign(assignment, line);
    if (line.text.startsWith("[")) return; // ini-style section header: ignored
    if (!this.ifs.active) return;
    throw new Error(`"${line.text}" is not a valid configuration line (expected NAME = value)`);
  }

  private assign(m: RegExpExecArray, line: LogicalLine): void {
    const [, name = "", op = "=", rest = ""] = m;
    let value = rest.trim();
    let lines: number[] | undefined;
    if (op === "@=") ({ value, lines } = this.readBlock(name, value, line));
    if (!this.ifs.active) return;
    const old = this.config.raw(name)?.value ?? "";
    value = expandSelf(value, name, old);
    if (op.startsWith("+") && old !== "" && value !== "") value = old + appendSeparator(op) + value;
    else if (op.startsWith("+") && value === "") value = old;
    if (value.length > MACRO_EXPANSION_LIMIT) {
      throw new Error(`${name} grows beyond ${MACRO_EXPANSION_LIMIT} characters (self-references doubling it?)`);
    }
    const entry: ConfigEntry = { name, value, source: { file: this.file, line: line.line } };
    if (lines) entry.lines = lines;
    this.config.define(entry);
  }

  /** Collects an `@=tag` body: comment and blank lines dropped, lines trimmed. */
  private readBlock(name: string, tag: string, start: LogicalLine): { value: string; lines: number[] } {
    if (tag === "" || /\s/.test(tag)) throw new Error(`${name} @=: the block needs a one-word tag`);
    const body: string[] = [];
    const lines: number[] = [];
    while (this.next < this.lines.length) {
      const line = this.lines[this.next++]!;
      if (line.text === `@${tag}`) return { value: body.join("\n"), lines };
      if (line.text === "" || line.text.startsWith("#")) continue;
      body.push(line.text);
      lines.push(line.line);
    }
    throw Object.assign(new Error(`unterminated @=${tag} block for ${name} (no closing @${tag} line)`), {
      line: start.line,
    });
  }

  private directive(m: RegExpExecArray, line: LogicalLine): void {
    const keyword = m[1]!.toLowerCase();
    const modifier = m[2]!.trim().toLowerCase();
    const arg = this.config.expand(m[3]!.trim(), this.where(line.line));
    if (keyword === "error") throw new Error(`error: ${arg}`);
    if (keyword === "warning") {
      this.config.warnings.push(`${this.where(line.line)}: warning: ${arg}`);
      return;
    }
    if (keyword === "use") {
      this.config.warnings.push(`${this.where(line.line)}: "use ${m[2]!.trim()} : ${arg}" skipped (metaknobs are not supported)`);
      return;
    }
    if (modifier === "command") throw new Error(`include command is not supported (no shell from config)`);
    if (modifier !== "" && modifier !== "ifexist") throw new Error(`unknown include form "include ${modifier}"`);
    this.include(arg, modifier === "ifexist");
  }

  private include(path: string, ifExist: boolean): void {
    const limit = this.options.includeDepthLimit ?? INCLUDE_DEPTH_LIMIT;
    if (this.depth + 1 > limit) throw new Error(`include nesting deeper than ${limit} (is ${path} including itself?)`);
    const base = this.file.startsWith("<") ? process.cwd() : dirname(this.file);
    const full = isAbsolute(path) ? path : resolve(base, path);
    const readFile = this.options.readFile ?? ((p: string) => readFileSync(p, "utf8"));
    let text: string;
    try {
      text = readFile(full);
    } catch (e) {
      if (ifExist) return;
      throw new Error(`cannot include ${full}: ${(e as Error).message}`);
    }
    new FileReader(this.config, this.options, full, this.depth + 1).read(text);
  }
}

/** `+,=` appends with `,`; `+&&=` with ` && `; plain `+=` with a space. */
function appendSeparator(op: string): string {
  const sep = op.slice(1, -1);
  if (sep === "") return " ";
  return sep.length === 1 ? sep : ` ${sep} `;
}

/** A self-reference `$(NAME)` / `$(NAME:default)` is replaced by the value defined so far. */
export function expandSelf(value: string, name: string, old: string): string {
  const escaped = name.replace(/[.]/g, "\\.");
  const self = new RegExp(`(?<!\\$)\\$\\(${escaped}(?::([^()]*))?\\)`, "gi");
  return value.replace(self, (_all, fallback: string | undefined) =>
    old !== "" ? old : (fallback ?? ""),
  );
}
