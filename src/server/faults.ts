/**
 * Faults that escape every plugin call: a rejected promise nobody awaited, an exception
 * thrown from a plugin's own timer or event callback. Node ends the process for both by
 * default; the daemon must not die because a plugin misbehaved outside a handler, so it
 * attributes each one by its stack to the plugin whose file raised it and logs it.
 */
import { fileURLToPath, pathToFileURL } from "node:url";

/** A loaded plugin, as the host lists it. */
export interface PluginFile {
  name: string;
  path: string;
}

export type FaultKind = "unhandled rejection" | "uncaught exception";

/** The plugin whose file appears in `err`'s stack (the innermost frame wins), if any. */
export function attributeToPlugin(err: unknown, plugins: PluginFile[]): PluginFile | undefined {
  const stack = err instanceof Error ? (err.stack ?? "") : "";
  if (stack === "") return undefined;
  let best: { at: number; plugin: PluginFile } | undefined;
  for (const plugin of plugins) {
    for (const form of pathForms(plugin.path)) {
      const at = stack.indexOf(form);
      if (at >= 0 && (best === undefined || at < best.at)) best = { at, plugin };
    }
  }
  return best?.plugin;
}

function pathForms(path: string): string[] {
  if (path === "" || !path.includes("/")) return [];
  try {
    const file = path.startsWith("file:") ? fileURLToPath(path) : path;
    return [file, pathToFileURL(file).href];
  } catch {
    return [path];
  }
}

/**
 * Installs process handlers for the daemon: a fault attributed to a plugin is logged under
 * its name and the daemon carries on; an unattributed unhandled rejection is logged with its
 * stack and the daemon carries on; an unattributed uncaught exception (a bug in jobtap
 * itself, whose state may be broken) is logged and handed to `fatal`. Returns the uninstaller.
 */
export function containPluginFaults(
  plugins: () => PluginFile[],
  log: (level: "warn" | "error", message: string) => void,
  fatal: (err: unknown) => void,
): () => void {
  const handle = (kind: FaultKind) => (err: unknown) => {
    const plugin = attributeToPlugin(err, plugins());
    const text = err instanceof Error ? err.message : String(err);
    if (plugin) {
      log("error", `plugin ${plugin.name}: ${kind} (contained, the daemon carries on): ${text}`);
      return;
    }
    const detail = err instanceof Error ? (err.stack ?? text) : text;
    log("error", `${kind} not raised by any plugin: ${detail}`);
    if (kind === "uncaught exception") fatal(err);
  };
  const onRejection = handle("unhandled rejection");
  const onException = handle("uncaught exception");
  process.on("unhandledRejection", onRejection);
  process.on("uncaughtException", onException);
  return () => {
    process.off("unhandledRejection", onRejection);
    process.off("uncaughtException", onException);
  };
}
