/**
 * `jobtap condor`: HTCondor tools for admins testing their configuration before loading it.
 *
 *   jobtap condor transform --rules FILE [--ad FILE|-] [--config FILE]
 *   jobtap condor transform --config FILE --route NAME [--ad FILE|-]
 *   jobtap condor config FILE [NAME...]
 *   jobtap condor routes FILE
 *
 * `transform` is condor_transform_ads: long-form job ads in (separated by blank lines, `#`
 * comment lines skipped), transformed ads out in its long form (see condor/long-ads.ts). `config` is condor_config_val -v: expanded values with the
 * file and line they come from.
 */
import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { Evaluator } from "../classad/index.js";
import { TransformRun } from "../condor/apply.js";
import { readCondorConfigFile } from "../condor/config-reader.js";
import { formatLongAd, readLongAds } from "../condor/long-ads.js";
import type { CondorConfig } from "../condor/config.js";
import { formatSource } from "../condor/config.js";
import { convertOldRoutes } from "../../plugins-builtin/condor-router/old-routes.js";
import { readRouterConfig } from "../../plugins-builtin/condor-router/routes-condor.js";
import { parseTransform, type Transform } from "../condor/transform.js";
import { ErrorCode, isJobtapError, JobtapError } from "../errors.js";
import { parseArgs, type CommandSpec } from "./args.js";
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

/**
 * condor_transform_ads' exit statuses, as its source sets them (its manual says 0 and 1):
 * 0 when the input held no ad, 1 when the last ad was transformed and written, 255 when a
 * transform failed (that ad is not written and the ads after it are not read).
 */
const EXIT_NO_ADS = 0;
const EXIT_TRANSFORMED = 1;
const EXIT_TRANSFORM_FAILED = 255;

async function transformCommand(argv: string[], io: CliIO): Promise<number> {
  const p = parseArgs(argv, SPEC.subcommands.transform);
  if (p.positionals.length > 0) throw usage(`unexpected argument ${p.positionals[0]}`);
  const config = typeof p.options.config === "string" ? readConfig(p.options.config, io) : undefined;
  const transforms = await chosenTransforms(p.options, io, config);
  const adPath = typeof p.options.ad === "string" ? p.options.ad : "-";
  const label = adPath === "-" ? "<stdin>" : adPath;
  const options = { evaluator: new Evaluator(), env: io.env, ...(config ? { fallback: config.macroScope("config") } : {}) };
  const { ads, stoppedAt } = readLongAds(await readInput(adPath, io));
  let status = EXIT_NO_ADS;
  for (const { ad: input, firstLine } of ads) {
    const run = new TransformRun(options);
    let ad = input;
    for (const transform of transforms) {
      const outcome = run.apply(transform, ad);
      for (const w of outcome.warnings) io.stderr(`warning: ${w}\n`);
      if (!outcome.ok) {
        io.stderr(`error: ${label}: transform of the ad at line ${firstLine} failed: ${outcome.error}\n`);
        return EXIT_TRANSFORM_FAILED;
      }
      ad = outcome.ad;
    }
    io.stdout(formatLongAd(ad));
    status = EXIT_TRANSFORMED;
  }
  // HTCondor stops silently at a line that is not an attribute; we say where.
  if (stoppedAt) io.stderr(`error: ${label}:${stoppedAt.line}: ${stoppedAt.message}; the ads from there on were not read\n`);
  return status;
}

async function configCommand(argv: string[], io: CliIO): Promise<number> {
  const p = parseArgs(argv, SPEC.subcommands.config);
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
  const p = parseArgs(argv, SPEC.subcommands.routes);
  const [file] = p.positionals;
  if (file === undefined) throw usage("routes needs a FILE");
  const config = readConfig(file, io);
  if (p.options["convert-old-routes"] === true) return printConverted(config, io);
  const router = readRouterConfig(config);
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

/** The route table in the current syntax (HTCondor's `condor_transform_ads -convertoldroutes`). */
function printConverted(config: Parameters<typeof convertOldRoutes>[0], io: CliIO): number {
  if (!config.has("JOB_ROUTER_ENTRIES") && !config.has("JOB_ROUTER_ENTRIES_FILE")) throw usage("--convert-old-routes: the file sets no JOB_ROUTER_ENTRIES or JOB_ROUTER_ENTRIES_FILE");
  const old = convertOldRoutes(config);
  for (const w of old.warnings.slice(1)) io.stderr(`warning: ${w}\n`);
  io.stdout(`JOB_ROUTER_ROUTE_NAMES = ${old.routes.map((r) => r.name).join(" ")}\n`);
  for (const r of old.routes) io.stdout(`JOB_ROUTER_ROUTE_${r.name} @=jrt\n${r.source.text.trimEnd()}\n@jrt\n`);
  return 0;
}

/** `jobtap condor ...`: dispatches to transform, config or routes. */
export const condor: Subcommand = async (argv, io) => {
  const [sub, ...rest] = argv;
  if (sub === "transform") return transformCommand(rest, io);
  if (sub === "config") return configCommand(rest, io);
  if (sub === "routes") return routesCommand(rest, io);
  throw usage(`${sub === undefined ? "missing subcommand" : `unknown subcommand "${sub}"`} (known: transform, config, routes)`);
};

/** The option tables of `jobtap condor`'s subcommands (parser and --help). */
export const SPEC = {
  subcommands: {
    transform: {
      usage: ["condor transform --rules FILE [--ad FILE|-] [--config FILE]", "condor transform --config FILE --route NAME [--ad FILE|-]"],
      summary: "applies transform rules, or a job router route's transforms, to ads (condor_transform_ads)",
      options: [
        { name: "rules", value: "FILE", help: "the transform rules (HTCondor transform language)" },
        { name: "ad", value: "FILE|-", help: "the ads to transform, condor_q -l form (default: stdin)" },
        { name: "config", value: "FILE", help: "an HTCondor config file: its macros, and its JOB_ROUTER routes for --route" },
        { name: "route", value: "NAME", help: "apply this route of --config (with its pre- and post-route transforms)" },
      ],
    },
    config: { usage: ["condor config FILE [NAME...]"], summary: "prints an HTCondor config file's values and where each is set (condor_config_val -v)", options: [] },
    routes: {
      usage: ["condor routes FILE [--json]", "condor routes --convert-old-routes FILE"],
      summary: "prints the job router routes an HTCondor config file defines",
      options: [
        { name: "json", help: "the parsed router config as JSON" },
        { name: "convert-old-routes", help: "print the deprecated JOB_ROUTER_ENTRIES routes in the current syntax (used whatever JOB_ROUTER_USE_DEPRECATED_ROUTER_ENTRIES says)" },
      ],
    },
  } satisfies Record<string, CommandSpec>,
};
