/**
 * `--help` text, generated from the option tables the parser reads (args.ts), as `flux
 * jobs --help` prints one line per option: usage forms, what the command does, then each
 * option with its short form, value placeholder and description.
 */
import type { CommandSpec, OptionSpec } from "./args.js";

/** A command's table: one spec, or one per subcommand (`job info`, `job kill`, ...). */
export type CommandHelp = CommandSpec | { subcommands: Record<string, CommandSpec> };

/** The spec of one subcommand, or undefined when `help` has none of that name. */
export function subcommandSpec(help: CommandHelp, sub: string | undefined): CommandSpec | undefined {
  if (!("subcommands" in help) || sub === undefined) return undefined;
  return Object.hasOwn(help.subcommands, sub) ? help.subcommands[sub] : undefined;
}

/** Every spec under `help` with the words that reach it (`["info"]`, or `[]` for a plain command). */
export function allSpecs(help: CommandHelp): Array<{ path: string[]; spec: CommandSpec }> {
  if (!("subcommands" in help)) return [{ path: [], spec: help }];
  return Object.entries(help.subcommands).map(([sub, spec]) => ({ path: [sub], spec }));
}

/** `-c, --count=N`, `    --json`: the left column of one option line. */
function optionLabel(o: OptionSpec): string {
  const long = `--${o.name}${o.value === undefined ? "" : `=${o.value}`}`;
  return o.short === undefined ? `    ${long}` : `-${o.short}, ${long}`;
}

/** The options block of one spec (empty when it takes none). */
function optionLines(spec: CommandSpec, withHelp = true): string[] {
  const options = withHelp ? [...spec.options, { name: "help", short: "h", help: "print this help and exit" }] : spec.options;
  if (options.length === 0) return ["  (no options)"];
  const labels = options.map(optionLabel);
  const width = Math.max(...labels.map((l) => l.length)) + 2;
  return options.map((o, i) => `  ${(labels[i] as string).padEnd(width)}${o.help}${o.repeat ? " (repeatable)" : ""}`);
}

/** Usage lines under one "usage:" heading. */
function usageLines(specs: CommandSpec[]): string[] {
  return specs.flatMap((s) => s.usage).map((l, i) => `${i === 0 ? "usage: " : "       "}jobtap ${l}`);
}

/** The help of one command or subcommand. */
export function renderSpec(spec: CommandSpec): string {
  return [...usageLines([spec]), "", spec.summary, "", "options:", ...optionLines(spec)].join("\n") + "\n";
}

/** The help of a command: every subcommand's usage, then each one's summary and options. */
export function renderHelp(name: string, summary: string, help: CommandHelp): string {
  if (!("subcommands" in help)) return renderSpec(help);
  const specs = Object.entries(help.subcommands);
  const sections = specs.map(([sub, s]) => [`${name} ${sub}: ${s.summary}`, ...optionLines(s, false)].join("\n"));
  const footer = `\`${name} SUBCOMMAND --help\` describes one subcommand.`;
  return [...usageLines(specs.map(([, s]) => s)), "", `${name}: ${summary}`, "", ...sections.flatMap((s) => [s, ""]), footer, ""].join("\n");
}
