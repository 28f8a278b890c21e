/**
 * The host's side of the plugin context (context.ts): what every plugin's context reaches
 * through (clock, owner, shield, manager, state store, error wrapping with the current
 * frame or service), and the host's defaults (stderr logger, in-memory state store).
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { ErrorCode, JobtapError, isJobtapError } from "../errors.js";
import type { Clock } from "../manager/base/clock.js";
import type { HookUsers } from "../hooks/types.js";
import type { ManagerPort, PluginStateStore } from "../manager/port/port.js";
import type { ContextHost } from "./context.js";
import { msg, type Dispatcher, type HostLogger } from "./dispatch.js";
import type { PluginRecord } from "./record.js";
import type { PluginRegistry } from "./registry.js";
import { label } from "./stack.js";

/** What the context host needs besides the registry and the dispatcher. */
export interface ContextDeps {
  clock: Clock;
  log: HostLogger;
  manager(who: string): ManagerPort;
  owner(): number;
  /** The manager's per-plugin state store, if it has one. */
  stateStore(): PluginStateStore | undefined;
  hookUsers: HookUsers | undefined;
  withoutExplain: boolean;
}

/** The ContextHost of one host, plus the service scope `callService` runs handlers in. */
export function contextHost(
  dispatcher: Dispatcher,
  registry: PluginRegistry,
  deps: ContextDeps,
): ContextHost {
  let memoryState: PluginStateStore | undefined;
  /** The service handler running (across its awaits), so context errors name it. */
  const serviceScope = new AsyncLocalStorage<{ plugin: PluginRecord; method: string }>();
  return {
    clock: deps.clock,
    get owner() {
      return deps.owner();
    },
    shield: dispatcher.shield,
    report: deps.log,
    manager: deps.manager,
    stateStore: () => deps.stateStore() ?? (memoryState ??= memoryStateStore()),
    hookUsers: deps.hookUsers,
    withoutExplain: deps.withoutExplain,
    currentFrame: (id, plugin) => dispatcher.currentFrame(id, plugin),
    wrapError(plugin, id, what, e) {
      const frame = id === undefined ? undefined : dispatcher.currentFrame(id);
      const service = serviceScope.getStore();
      const inService = service?.plugin === plugin ? `service ${service.method}` : undefined;
      const topic = frame?.topic ?? inService ?? "(outside a callback)";
      const code = isJobtapError(e) ? e.code : ErrorCode.PLUGIN_CALL;
      return new JobtapError(code, `${label(plugin, topic, id)}: ${what}: ${msg(e)}`, {
        plugin: plugin.name,
        topic,
      });
    },
    subscribe: (plugin, id) => dispatcher.subscribe(plugin, id),
    unsubscribe: (plugin, id) => dispatcher.unsubscribe(plugin, id),
    callCustom: (topic, args, id) => dispatcher.callCustom(topic, args, id),
    handlersChanged: () => registry.invalidate(),
    inService: (plugin, method, fn) => serviceScope.run({ plugin, method }, fn),
  };
}

/** Warnings and errors to stderr (a host given no logger). */
export function defaultLogger(level: string, message: string): void {
  if (level === "warn" || level === "error") process.stderr.write(`jobtap: ${message}\n`);
}

/** Plugin state kept in memory only (lost on restart): for hosts without a job store. */
function memoryStateStore(): PluginStateStore {
  const data = new Map<string, Map<string, unknown>>();
  const of = (plugin: string) => {
    let m = data.get(plugin);
    if (m === undefined) data.set(plugin, (m = new Map()));
    return m;
  };
  return {
    get: (plugin, key) => data.get(plugin)?.get(key),
    set: (plugin, key, value) => void of(plugin).set(key, structuredClone(value)),
    delete: (plugin, key) => void data.get(plugin)?.delete(key),
    keys: (plugin) => [...(data.get(plugin)?.keys() ?? [])],
  };
}
