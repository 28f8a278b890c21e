/**
 * `jobtap condor`: HTCondor tools for admins testing their configuration before loading it.
 *
 *   jobtap condor transform --rules FILE [--ad FILE|-] [--config FILE]
 *   jobtap condor transform --config FILE --route NAME [--ad FILE|-]
 *   jobtap condor config FILE [NAME...]
 *   jobtap condor routes FILE
 *
 * `transform` is condor_transform_ads: old-style job ads in (separated by blank lines or
 * dashes), transformed ads out. `config` is condor_config_val -v: expanded values with the
 * file and line they come from.
 */
import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { Evaluator, printOldAd, readOldAd, type ClassAd } from "../classad/index.js";
import { TransformRun } from "../condor/apply.js";
import { readCondorConfigFile } from "../condor/config-reader.js";
import type { CondorConfig } from "../condor/config.js";
import { formatSource } from "../condor/config.js";
import { readRouterConfig } from "../condor/router-config.js";
import { parseTransform, type Transform } from "../condor/transform.js";
import { ErrorCode, isJobtapError, JobtapError } from "../errors.js";
import { parseArgs } from "./args.js";
import type { CliIO, Subcommand } from "./io.js";

const USAGE_TEXT = `usage: jobtap condor transform --rules FILE [--ad FILE|-] [--config FILE]
       jobtap condor transform --config FILE --route NAME [--ad FILE|-]
       jobtap condor config FILE [NAME...]
       jobtap condor routes FILE
`;

function usage(message: string): JobtapError {
  return new JobtapError(ErrorCode.USAGE, `${message}\n${USAGE_TEXT}`);
}

async function readStdin(stdin: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString("utf8");
}

async function readInput(path: string, io: CliIO): Promise<string> {
  if (path === "-") return readStdin(io.stdin);
  try {
    return await readFile(resolve(io.cwd, path), "utf8");
  } catch (e) {
    throw new JobtapError(ErrorCode.INVALID_ARGUMENT, `${path}: cannot read: ${(e as Error).message}`);
  }
}

/** Splits a stream of old-style ads at blank lines and separator lines (`---...`). */
export function splitAds(text: string): { text: string; firstLine: number }[] {
  const ads: { text: string; firstLine: number }[] = [];
  let current: string[] = [];
  let first = 0;
  const lines = text.split("\n");
  lines.forEach((line, i) => {
    const separator = line.trim() === "" || /^-{3,}/.test(line.trim());
    if (!separator && current.length === 0) first = i + 1;
    if (!separator) current.push(line);
    if ((separator || i === lines.length - 1) && current.length > 0) {
      ads.push({ text: current.join("\n"), firstLine: first });
      current = [];
    }
  });
  return ads;
}

function readConfig(path: string, io: CliIO): CondorConfig {
  return readCondorConfigFile(resolve(io.cwd, path), { env: io.env });
}

/** The transforms to apply, in order: `--rules FILE`, or the pre/route/post of `--route`. */
async function chosenTransforms(opts: Record<string, string | string[] | true>, io: CliIO, config?: CondorConfig): Promise<Transform[]> {
  if (typeof opts.rules === "string") {
    return [parseTransform(await readInput(opts.rules, io), { file: opts.rules })];
  }
  if (typeof opts.route !== "string") throw usage("transform needs --rules FILE or --config FILE --route NAME");
  if (!config) throw usage("--route needs --config FILE");
  const router = readRouterConfig(config);
  const route = router.routes.find((r) => r.name.toLowerCase() === (opts.route as string).toLowerCase());
  if (!route) throw new JobtapError(ErrorCode.INVALID_ARGUMENT, `no enabled route named ${opts.route} (routes: ${router.routes.map((r) => r.name).join(" ") || "none"})`);
  return [...router.preRouteTransforms.map((t) => t.transform), route.transform, ...router.postRouteTransforms.map((t) => t.transform)];
}

function readAd(text: string, label: string, firstLine: number): ClassAd {
  const { ad, failed } = readOldAd(text);
  const bad = failed[0];
  if (bad) throw new JobtapError(ErrorCode.INVALID_ARGUMENT, `${label}:${firstLine + bad.line - 1}: ${bad.message}`);
  return ad;
}

async function transformCommand(argv: string[], io: CliIO): Promise<number> {
  const p = parseArgs(argv, [
    { name: "rules", value: true },
    { name: "ad", value: true },
    { name: "config", value: true },
    { name: "route", value: true },
  ]);
  if (p.positionals.length > 0) throw usage(`unexpected argument ${p.positionals[0]}`);
  const config = typeof p.options.config === "string" ? readConfig(p.options.config, io) : undefined;
  const transforms = await chosenTransforms(p.options, io, config);
  const adPath = typeof p.options.ad === "string" ? p.options.ad : "-";
  const options = { evaluator: new Evaluator(), env: io.env, ...(config ? { fallback: config.macroScope("config") } : {}) };
  let status = 0;
  const outputs: string[] = [];
  for (const { text, firstLine } of splitAds(await readInput(adPath, io))) {
    const run = new TransformRun(options);
    let ad = readAd(text, adPath === "-" ? "<stdin>" : adPath, firstLine);
    for (const transform of transforms) {
      const outcome = run.apply(transform, ad);
      for (const w of outcome.warnings) io.stderr(`warning: ${w}\n`);
      if (!outcome.ok) {
        io.stderr(`error: ad at line ${firstLine}: ${outcome.error}\n`);
        status = 1;
        break;
      }
      ad = outcome.ad;
    }
    outputs.push(printOldAd(ad));
  }
  io.stdout(outputs.join("\n"));
  return status;
}

async function configCommand(argv: string[], io: CliIO): Promise<number> {
  const p = parseArgs(argv, []);
  const [file, ...names] = p.positionals;
  if (file === undefined) throw usage("config needs a FILE");
  const config = readConfig(file, io);
  for (const w of config.warnings) io.stderr(`warning: ${w}\n`);
  let status = 0;
  for (const name of names.length > 0 ? names : config.names()) {
    const value = config.get(name);
    const entry = config.entry(name);
    if (value === undefined || entry === undefined) {
      if (names.length > 0) {
        io.stderr(`Not defined: ${name}\n`);
        status = 1;
      }
      continue;
    }
    const shown = value.includes("\n") ? ` @=end\n${value}\n@end` : ` = ${value}`;
    io.stdout(`${entry.name}${shown}\n # at: ${formatSource(entry.source)}\n`);
    if (entry.value !== value) io.stdout(` # raw: ${entry.name} = ${entry.value.replace(/\n/g, "\\n")}\n`);
  }
  return status;
}

async function routesCommand(argv: string[], io: CliIO): Promise<number> {
  const p = parseArgs(argv, [{ name: "json" }]);
  const [file] = p.positionals;
  if (file === undefined) throw usage("routes needs a FILE");
  const router = readRouterConfig(readConfig(file, io));
  for (const w of router.warnings) io.stderr(`warning: ${w}\n`);
  if (p.options.json === true) {
    io.stdout(JSON.stringify(router, (_k, v: unknown) => (v instanceof RegExp ? String(v) : v), 2) + "\n");
    return 0;
  }
  for (const t of router.preRouteTransforms) io.stdout(`pre-route transform ${t.name}\n`);
  for (const r of router.routes) {
    const s = r.settings;
    io.stdout(
      `route ${r.name}: requirements ${r.transform.requirements ?? "(source constraint only)"}; ` +
        `MaxJobs ${s.maxJobs} MaxIdleJobs ${s.maxIdleJobs} universe ${s.targetUniverse}` +
        `${s.gridResource ? ` GridResource "${s.gridResource}"` : ""}\n`,
    );
  }
  for (const t of router.postRouteTransforms) io.stdout(`post-route transform ${t.name}\n`);
  return 0;
}

/** `jobtap condor ...`: dispatches to transform, config or routes. */
export const condor: Subcommand = async (argv, io) => {
  const [sub, ...rest] = argv;
  try {
    if (sub === "transform") return await transformCommand(rest, io);
    if (sub === "config") return await configCommand(rest, io);
    if (sub === "routes") return await routesCommand(rest, io);
    throw usage(sub === undefined ? "missing subcommand" : `unknown subcommand "${sub}"`);
  } catch (e) {
    if (!isJobtapError(e)) throw e;
    io.stderr(`jobtap condor: ${e.message}\n`);
    return e.code === ErrorCode.USAGE ? 2 : 1;
  }
};
