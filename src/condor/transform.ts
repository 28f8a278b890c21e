/**
 * The job transform language, parsed once into steps (HTCondor's MacroStreamXFormSource).
 *
 * Everything that can be checked without a job is checked here, so a broken route fails
 * when it is loaded, naming the file and line: unknown commands, missing arguments,
 * unbalanced if/elif/else/endif, unterminated `@=` blocks, regexes that do not compile and
 * a REQUIREMENTS that does not parse. What depends on the job (macro expansion, SET values
 * that only parse after expansion) is left to apply time.
 */
import { parseExpr } from "./classad-bridge.js";
import { ErrorCode, JobtapError } from "../errors.js";
import { readLogicalLines, type LogicalLine } from "./lines.js";
import { parseAttrRegex, type AttrRegex } from "./regex.js";

export type { AttrRegex } from "./regex.js";

/** Commands that change the ad or the macro table. */
export type EditOp = "SET" | "DEFAULT" | "EVALSET" | "EVALMACRO";

/** One step of a transform; `line` is 1-based within the transform text. */
export type TransformStep =
  | { op: "macro"; line: number; name: string; value: string; append: boolean }
  | { op: EditOp; line: number; attr: string; value: string }
  | { op: "COPY" | "RENAME"; line: number; from: string | AttrRegex; to: string }
  | { op: "DELETE"; line: number; attr: string | AttrRegex }
  | { op: "if"; line: number; branches: IfBranch[]; otherwise?: TransformStep[] };

/** One `if`/`elif` branch: its condition text and the steps it guards. */
export interface IfBranch {
  line: number;
  condition: string;
  steps: TransformStep[];
}

/** Where a transform's text came from, to turn step lines into file lines. */
export interface TransformOrigin {
  file: string;
  /** Source line of each text line (from a config `@=` block), when known. */
  lines?: number[];
  /** Source line of the first text line when `lines` is absent (default 1). */
  firstLine?: number;
}

/** A parsed transform: metadata lines pulled out, the body as a step tree. */
export interface Transform {
  /** From a `NAME` line (routes named by their knob ignore it). */
  name?: string;
  /** From `REQUIREMENTS`: gates the whole transform, tested on the ad before it runs. */
  requirements?: string;
  /** From `UNIVERSE`, as a number. */
  universe?: number;
  /** Arguments of a `TRANSFORM` line, which ends the body. */
  transformArgs?: string;
  steps: TransformStep[];
  origin: TransformOrigin;
}

/** HTCondor universe names (case-insensitive) and their numbers. */
export const UNIVERSES: Readonly<Record<string, number>> = {
  standard: 1,
  vanilla: 5,
  scheduler: 7,
  grid: 9,
  java: 10,
  parallel: 11,
  local: 12,
  vm: 13,
  docker: 5,
  container: 5,
};

/** Parses a universe name or number; undefined when it is neither. */
export function parseUniverse(text: string): number | undefined {
  const t = text.trim().replace(/^"(.*)"$/, "$1");
  if (/^\d+$/.test(t)) return Number(t);
  return UNIVERSES[t.toLowerCase()];
}

const COMMANDS = new Set(["SET", "DEFAULT", "EVALSET", "EVALMACRO", "COPY", "RENAME", "DELETE"]);
const METADATA = /^(NAME|UNIVERSE|REQUIREMENTS|TRANSFORM)(?:\s+(?![\s=:])(.*))?$/is;
const ASSIGNMENT = /^([A-Za-z_][A-Za-z0-9_.]*)\s*(@=|\+=|=)\s*(.*)$/s;
const CONDITIONAL = /^(if|elif|else|endif)(?:\s+(.*))?$/is;

/** The file line of transform text line `line`, for messages. */
export function transformWhere(origin: TransformOrigin, line: number): string {
  const fileLine = origin.lines?.[line - 1] ?? (origin.firstLine ?? 1) + line - 1;
  return `${origin.file}:${fileLine}`;
}

/** Parses transform text; throws CONDOR_TRANSFORM errors naming file and line. */
export function parseTransform(text: string, origin: TransformOrigin = { file: "<transform>" }): Transform {
  return new TransformParser(text, origin).parse();
}

/** Frames of open ifs while parsing: where new steps go. */
interface OpenIf {
  step: Extract<TransformStep, { op: "if" }>;
  inElse: boolean;
}

class TransformParser {
  private readonly lines: LogicalLine[];
  private next = 0;
  private readonly result: Transform;
  private readonly open: OpenIf[] = [];

  constructor(text: string, private readonly origin: TransformOrigin) {
    this.lines = readLogicalLines(text);
    this.result = { steps: [], origin };
  }

  parse(): Transform {
    while (this.next < this.lines.length) {
      const line = this.lines[this.next++]!;
      if (line.text === "" || line.text.startsWith("#")) continue;
      if (this.classify(line) === "end") break;
    }
    const unclosed = this.open[this.open.length - 1];
    if (unclosed) this.fail(unclosed.step.line, "if has no matching endif");
    return this.result;
  }

  private fail(line: number, problem: string): never {
    const where = transformWhere(this.origin, line);
    throw new JobtapError(ErrorCode.CONDOR_TRANSFORM, `${where}: ${problem}`, { where });
  }

  /** The step list new steps are appended to (innermost open branch). */
  private get target(): TransformStep[] {
    const top = this.open[this.open.length - 1];
    if (!top) return this.result.steps;
    if (top.inElse) return (top.step.otherwise ??= []);
    return top.step.branches[top.step.branches.length - 1]!.steps;
  }

  private classify(line: LogicalLine): "end" | undefined {
    const meta = METADATA.exec(line.text);
    if (meta) return this.metadata(meta[1]!.toUpperCase(), (meta[2] ?? "").trim(), line.line);
    const cond = CONDITIONAL.exec(line.text);
    if (cond) return void this.conditional(cond[1]!.toLowerCase(), (cond[2] ?? "").trim(), line.line);
    const assign = ASSIGNMENT.exec(line.text);
    if (assign) return void this.assignment(assign, line);
    if (/^include\b/i.test(line.text)) this.fail(line.line, "include is not allowed in a transform");
    this.command(line);
    return undefined;
  }

  private metadata(keyword: string, arg: string, line: number): "end" | undefined {
    if (keyword === "TRANSFORM") {
      this.result.transformArgs = arg;
      return "end";
    }
    if (arg === "") this.fail(line, `${keyword} needs a value`);
    if (keyword === "NAME") this.result.name = arg;
    else if (keyword === "UNIVERSE") {
      const universe = parseUniverse(arg);
      if (universe === undefined) this.fail(line, `UNIVERSE ${arg} is not a universe name or number`);
      this.result.universe = universe;
    } else {
      try {
        parseExpr(arg, true);
      } catch (e) {
        this.fail(line, `REQUIREMENTS ${arg} does not parse: ${(e as Error).message}`);
      }
      this.result.requirements = arg;
    }
    return undefined;
  }

  private conditional(keyword: string, condition: string, line: number): void {
    const top = this.open[this.open.length - 1];
    if (keyword === "if") {
      if (this.open.length >= 63) this.fail(line, "if nesting deeper than 63 levels");
      const step: TransformStep = { op: "if", line, branches: [{ line, condition, steps: [] }] };
      this.target.push(step);
      this.open.push({ step, inElse: false });
      return;
    }
    if (!top) this.fail(line, `${keyword} without a matching if`);
    if (keyword === "endif") {
      this.open.pop();
      return;
    }
    if (top.inElse) this.fail(line, `${keyword} after else`);
    if (keyword === "else") top.inElse = true;
    else top.step.branches.push({ line, condition, steps: [] });
  }

  private assignment(m: RegExpExecArray, line: LogicalLine): void {
    const [, name = "", op, rest = ""] = m;
    let value = rest.trim();
    if (op === "@=") value = this.readBlock(name, value, line.line);
    this.target.push({ op: "macro", line: line.line, name, value, append: op === "+=" });
  }

  private readBlock(name: string, tag: string, start: number): string {
    if (tag === "" || /\s/.test(tag)) this.fail(start, `${name} @=: the block needs a one-word tag`);
    const body: string[] = [];
    while (this.next < this.lines.length) {
      const line = this.lines[this.next++]!;
      if (line.text === `@${tag}`) return body.join("\n");
      if (line.text !== "" && !line.text.startsWith("#")) body.push(line.text);
    }
    return this.fail(start, `unterminated @=${tag} block for ${name} (no closing @${tag} line)`);
  }

  private command(line: LogicalLine): void {
    const m = /^(\S+)\s*(.*)$/s.exec(line.text)!;
    const keyword = m[1]!.toUpperCase();
    if (!COMMANDS.has(keyword)) this.fail(line.line, `${m[1]} is not a valid transform keyword`);
    const rest = m[2]!.trim();
    if (rest === "") this.fail(line.line, `${keyword} needs an argument`);
    const { first, remainder } = splitFirstArgument(rest);
    const regex = first.startsWith("/") ? this.regex(first, keyword, line.line) : undefined;
    if (keyword === "DELETE") {
      this.target.push({ op: "DELETE", line: line.line, attr: regex ?? first });
      return;
    }
    if (remainder === "") this.fail(line.line, `${keyword} needs 2 arguments`);
    if (keyword === "COPY" || keyword === "RENAME") {
      this.target.push({ op: keyword, line: line.line, from: regex ?? first, to: remainder });
    } else {
      if (regex) this.fail(line.line, `${keyword} does not take a /regex/`);
      this.target.push({ op: keyword as EditOp, line: line.line, attr: first, value: remainder });
    }
  }

  private regex(token: string, keyword: string, line: number): AttrRegex {
    try {
      return parseAttrRegex(token);
    } catch (e) {
      return this.fail(line, `${keyword} ${token}: ${(e as Error).message}`);
    }
  }
}

/**
 * Splits a command's arguments: the first token (a `/regex/flags` may contain spaces), with
 * a glued trailing `=` or `,` stripped, and the rest with a lone leading `=` or `,` skipped.
 */
export function splitFirstArgument(rest: string): { first: string; remainder: string } {
  let end: number;
  if (rest.startsWith("/")) {
    const close = rest.indexOf("/", 1);
    end = close < 0 ? rest.length : rest.slice(close).search(/\s/);
    end = close < 0 ? rest.length : end < 0 ? rest.length : close + end;
  } else {
    end = rest.search(/\s/);
    if (end < 0) end = rest.length;
  }
  let first = rest.slice(0, end);
  if (!first.startsWith("/") && first.length > 1 && /[=,]$/.test(first)) first = first.slice(0, -1);
  let remainder = rest.slice(end).trim();
  const lone = /^[=,](\s+|$)/.exec(remainder);
  if (lone) remainder = remainder.slice(lone[0].length).trim();
  return { first, remainder };
}
